package profiling

import (
	"os"
	"path/filepath"
	"testing"
)

// StartCPU writes a profile that stop closes; a second one while it runs is refused,
// and so is a file that cannot be created.
func TestStartCPU(t *testing.T) {
	file := filepath.Join(t.TempDir(), "cpu.prof")
	stop, err := StartCPU(file)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := StartCPU(filepath.Join(t.TempDir(), "second.prof")); err == nil {
		t.Error("a second CPU profile started while one runs")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(file); err != nil || fi.Size() == 0 {
		t.Errorf("the profile: %v, %v; want a file with the profile", fi, err)
	}
	if _, err := StartCPU(filepath.Join(t.TempDir(), "no", "such", "dir", "cpu.prof")); err == nil {
		t.Error("a profile started on a file that cannot be created")
	}
}
