package attachment

import (
	"bytes"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"syscall"
)

// confine bounds the memory of this process, a PDF reader: its address space to
// maxMemory bytes beyond what it holds now (RLIMIT_AS: an allocation past it ends the
// process, as the runtime cannot make it), and its Go heap's soft limit to half of
// maxMemory (the collector works harder first).
func confine(maxMemory int64) {
	debug.SetMemoryLimit(maxMemory / 2)
	vm, err := addressSpace()
	if err != nil {
		fmt.Fprintln(os.Stderr, "attachment: PDF reader: no address space bound:", err)
		return
	}
	lim := uint64(vm + maxMemory)
	if err := syscall.Setrlimit(syscall.RLIMIT_AS, &syscall.Rlimit{Cur: lim, Max: lim}); err != nil {
		fmt.Fprintln(os.Stderr, "attachment: PDF reader: no address space bound:", err)
	}
}

// addressSpace returns the bytes of this process's address space (/proc/self/statm's
// first field, in pages).
func addressSpace() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	f, _, _ := bytes.Cut(b, []byte(" "))
	pages, err := strconv.ParseInt(string(f), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("/proc/self/statm: %w", err)
	}
	return pages * int64(os.Getpagesize()), nil
}

// readerAttr has a reader killed when the thread that started it ends with this
// process (Pdeathsig): a reader orphaned by a replica killed -9 does not run on to its
// own deadline.
func readerAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
