package attachment

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sync/semaphore"
)

// A PDF is read in a child process (docs/architecture.md, "Files"): a hostile PDF
// can make github.com/ledongthuc/pdf recurse without end (an object stream that holds
// itself), allocate terabytes (a cross-reference table that starts at object 10^12),
// or grow its operand stack without bound (a content stream of operands and no
// operator). The Go runtime ends a process on a stack overflow or an allocation it
// cannot make, and recover does not catch either; in a child, only the child ends,
// and Read answers ErrUnreadable. The child is this program again (executable),
// started with childEnv set, which init below turns into the reader: any program
// that links this package, a test binary too, serves as its own reader. It gets no
// other environment (no tokens), the PDF on stdin, and Limits.MaxMemory of address
// space beyond what it has when it starts (confine); it is killed at the deadline.

// childEnv names the environment variable that makes this process a PDF reader:
// its value is the Limits, as JSON.
const childEnv = "THREADWRIGHT_ATTACHMENT_PDF_READER"

// childStack bounds a reader's goroutine stacks (the runtime's default is 1 GB):
// a recursion without end ends the child at once.
const childStack = 64 << 20

// pdfReaders bounds the PDF reader processes at once, one a core the process may use
// (GOMAXPROCS, which follows a container's CPU quota): each may use a core and
// Limits.MaxMemory until its deadline.
var pdfReaders = semaphore.NewWeighted(int64(max(1, runtime.GOMAXPROCS(0))))

// readerThreads bounds a reader's GOMAXPROCS: each thread's stack (8 MiB with cgo)
// counts against its address space.
const readerThreads = 2

// readerPath returns the program a reader runs (executable; a test's stand-in).
var readerPath = executable

func init() {
	if v, ok := os.LookupEnv(childEnv); ok {
		os.Exit(pdfChild(v, os.Stdin, os.Stdout))
	}
}

// childResult is what a reader writes on its stdout, as JSON.
type childResult struct {
	File File `json:"file"`
	// Err is readPDF's error, without ErrUnreadable's text; "" when it read the file.
	Err string `json:"error,omitempty"`
}

// pdfChild is the reader: it reads the PDF on in with readPDF within the Limits in
// limits (JSON), writes a childResult on out, and returns the exit status.
func pdfChild(limits string, in io.Reader, out io.Writer) int {
	var lim Limits
	if err := json.Unmarshal([]byte(limits), &lim); err != nil {
		fmt.Fprintln(os.Stderr, "attachment: PDF reader: limits:", err)
		return 2
	}
	lim = lim.withDefaults()
	// The bot's stop (a terminal's Ctrl-C, a service manager's signal to the group)
	// is not the reader's: it ends at its deadline, or with its parent (readerAttr).
	signal.Ignore(syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	runtime.GOMAXPROCS(readerThreads)
	debug.SetMaxStack(childStack)
	confine(lim.MaxMemory)
	data, err := io.ReadAll(in)
	if err != nil {
		fmt.Fprintln(os.Stderr, "attachment: PDF reader: read the file:", err)
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), lim.Timeout)
	defer cancel()
	var res childResult
	res.File, err = readPDF(ctx, data, lim)
	if err != nil {
		res.Err = strings.TrimPrefix(strings.TrimPrefix(err.Error(), ErrUnreadable.Error()), ": ")
	}
	if err := json.NewEncoder(out).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "attachment: PDF reader: write the text:", err)
		return 2
	}
	return 0
}

// readPDFApart reads data, a PDF, with readPDF in a reader process of its own, at most
// one a core at once, within ctx's deadline and lim. Errors wrap ErrUnreadable: the
// PDF's own (malformed, encrypted), the deadline, or the reader's end (it needed more
// memory or stack than it has: the runtime's fatal error names which).
func readPDFApart(ctx context.Context, data []byte, lim Limits) (File, error) {
	if ctx.Err() != nil {
		return File{}, errPDFTooLong
	}
	if err := pdfReaders.Acquire(ctx, 1); err != nil {
		return File{}, fmt.Errorf("%w (every PDF reader was busy)", errPDFTooLong)
	}
	defer pdfReaders.Release(1)
	exe, err := readerPath()
	if err != nil {
		return File{}, fmt.Errorf("%w: the PDF reader cannot start: %v", ErrUnreadable, err)
	}
	limits, err := json.Marshal(lim)
	if err != nil {
		return File{}, fmt.Errorf("%w: the PDF reader's limits: %v", ErrUnreadable, err)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = []string{childEnv + "=" + string(limits)}
	cmd.SysProcAttr = readerAttr()
	cmd.Stdin = bytes.NewReader(data)
	// Its text, as JSON: at most 6 bytes a character (an escaped control), and the rest.
	stdout := &cappedBuffer{max: 6*4*lim.MaxChars + 64<<10}
	stderr := &cappedBuffer{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.WaitDelay = time.Second // once killed, its pipes are not waited for longer
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return File{}, errPDFTooLong
	case err != nil:
		return File{}, fmt.Errorf("%w: the PDF reader stopped (%v): %s", ErrUnreadable, err, firstLine(stderr.String()))
	case stdout.over:
		return File{}, fmt.Errorf("%w: the PDF reader wrote more than its text", ErrUnreadable)
	}
	var res childResult
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return File{}, fmt.Errorf("%w: the PDF reader's answer: %v", ErrUnreadable, err)
	}
	if res.Err != "" {
		return File{}, fmt.Errorf("%w: %s", ErrUnreadable, res.Err)
	}
	return res.File, nil
}

// executable returns the path that starts this program again: on Linux
// /proc/self/exe, which still does once the file was replaced (an upgrade in place).
func executable() (string, error) {
	if runtime.GOOS == "linux" {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

// firstLine returns s's first non-empty line ("fatal error: stack overflow"), or
// "no message".
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		if line = strings.TrimSpace(line); line != "" {
			return line
		}
	}
	return "no message"
}

// cappedBuffer keeps the first max bytes written to it; over reports that more came.
type cappedBuffer struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil // the rest is dropped: the child is not blocked on its pipe
	}
	return c.Buffer.Write(p)
}
