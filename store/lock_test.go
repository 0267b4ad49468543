package store_test

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/store"
)

// lockHelperEnv, set to a directory, makes the test binary take that data directory's
// lock and report, then wait for its stdin to close: the second process.
const lockHelperEnv = "THREADWRIGHT_TEST_LOCK_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(lockHelperEnv); dir != "" {
		l, err := store.LockDataDir(dir)
		if err != nil {
			os.Stdout.WriteString("error: " + err.Error() + "\n")
			os.Exit(3)
		}
		os.Stdout.WriteString("locked\n")
		_, _ = os.Stdin.Read(make([]byte, 1))
		_ = l.Unlock()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestLockDataDirOneProcess: a process holds its data directory; a second process
// asking for it fails at once, naming the directory and the pid of the holder; once
// the holder lets go, the directory can be taken again.
func TestLockDataDirOneProcess(t *testing.T) {
	dir := t.TempDir()
	l, err := store.LockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("second process: %v, output %q; want it refused", err, out)
	}
	msg := string(out)
	if !strings.Contains(msg, dir) || !strings.Contains(msg, "process "+strconv.Itoa(os.Getpid())) {
		t.Errorf("refusal %q; want the directory %s and the holder's pid %d", msg, dir, os.Getpid())
	}
	if _, err := store.LockDataDir(dir); !errors.Is(err, store.ErrDataDirLocked) {
		t.Errorf("second lock in this process: %v; want ErrDataDirLocked", err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), lockHelperEnv+"="+dir)
	cmd.Stdin = strings.NewReader("") // the helper lets go at once
	if out, err := cmd.Output(); err != nil || !strings.Contains(string(out), "locked") {
		t.Errorf("after Unlock, a second process: %v, %q; want it to take the directory", err, out)
	}
}
