package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFileName is the name of the lock file in the data directory.
const LockFileName = "threadwright.lock"

// ErrDataDirLocked is returned by LockDataDir when another process holds the data
// directory.
var ErrDataDirLocked = errors.New("data directory in use")

// DataDirLock is a process's hold on its data directory (LockDataDir).
type DataDirLock struct{ f *os.File }

// LockDataDir takes dir (DATA_DIR) for this process alone, creating it if need be: an
// exclusive flock(2) on the file LockFileName in it, which holds this process's pid.
// One directory serves one process (docs/operations.md, "One process per data
// directory"): a second would migrate and write the same SQLite files. The kernel
// drops the lock when the process ends, however it ends. Errors: ErrDataDirLocked,
// naming the directory and the pid of the process that holds it, at once (it never
// waits); or the file system's.
func LockDataDir(dir string) (*DataDirLock, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("DATA_DIR %s: %w", dir, err)
	}
	path := filepath.Join(dir, LockFileName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("DATA_DIR %s: lock: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder := "another process"
		if b, rerr := os.ReadFile(path); rerr == nil {
			if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); perr == nil && pid > 0 {
				holder = "process " + strconv.Itoa(pid)
			}
		}
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("DATA_DIR %s is used by %s (%s holds it): %w; give each process a data directory of its own",
				dir, holder, path, ErrDataDirLocked)
		}
		return nil, fmt.Errorf("DATA_DIR %s: lock: %w", dir, err)
	}
	if err := writePID(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("DATA_DIR %s: lock: write the pid: %w", dir, err)
	}
	return &DataDirLock{f: f}, nil
}

// writePID replaces the content of f with this process's pid.
func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	_, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return err
}

// Unlock frees the data directory. The pid is left in the file: the next holder
// writes its own.
func (l *DataDirLock) Unlock() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := l.f.Close() // closing the last descriptor drops the flock
	l.f = nil
	return err
}
