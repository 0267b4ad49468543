//go:build !linux

package attachment

import (
	"fmt"
	"os"
	"runtime/debug"
	"syscall"
)

// confine bounds the memory of this process, a PDF reader, where no address space
// bound is set: its Go heap's soft limit to maxMemory bytes; the deadline bounds the
// rest.
func confine(maxMemory int64) {
	debug.SetMemoryLimit(maxMemory)
	fmt.Fprintln(os.Stderr, "attachment: PDF reader: no address space bound on this platform")
}

// readerAttr has no attributes for a reader where the parent's death kills no child.
func readerAttr() *syscall.SysProcAttr { return nil }
