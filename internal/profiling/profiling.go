package profiling

import (
	"errors"
	"os"
	"runtime/pprof"
)

// CPUEnv, set to a file name in a process's environment, makes it write its CPU
// profile there, from its start to its graceful stop (BenchmarkBurst's
// BURST_CPUPROFILE).
const CPUEnv = "THREADWRIGHT_TEST_CPUPROFILE"

// StartCPU writes this process's CPU profile (go tool pprof's format) to file until
// stop is called. Errors: the file's (created or truncated), or a CPU profile already
// running (pprof.StartCPUProfile); stop's, the file's close.
func StartCPU(file string) (stop func() error, err error) {
	f, err := os.Create(file)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
