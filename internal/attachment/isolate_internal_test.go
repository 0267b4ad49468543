package attachment

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/testkit/samplefiles"
)

// TestReaderKilledAtTheDeadline: a reader that does not end by itself (here a
// stand-in that sleeps, ignoring its input) is killed at the deadline, and Read says
// the PDF took too long.
func TestReaderKilledAtTheDeadline(t *testing.T) {
	script := filepath.Join(t.TempDir(), "reader")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { readerPath = executable })
	readerPath = func() (string, error) { return script, nil }
	_, err := Read(context.Background(), "slow.pdf", "", samplefiles.PDF(false, "text"), Limits{Timeout: 300 * time.Millisecond})
	if !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "took too long") {
		t.Fatalf("Read = %v; want ErrUnreadable, took too long", err)
	}
}

// TestReaderThatCannotStart: a reader that cannot start is ErrUnreadable, naming it.
func TestReaderThatCannotStart(t *testing.T) {
	t.Cleanup(func() { readerPath = executable })
	readerPath = func() (string, error) { return filepath.Join(t.TempDir(), "missing"), nil }
	_, err := Read(context.Background(), "a.pdf", "", samplefiles.PDF(false, "text"), Limits{})
	if !errors.Is(err, ErrUnreadable) || !strings.Contains(err.Error(), "the PDF reader stopped") {
		t.Fatalf("Read = %v; want ErrUnreadable from the reader", err)
	}
}
