package eval

import (
	"bytes"
	"strings"
	"testing"
)

// TestProgressBar: on a terminal, the progress is one line redrawn as a bar, which
// ends with a line break when the last run ends.
func TestProgressBar(t *testing.T) {
	var b bytes.Buffer
	p := &Progress{w: &b, tty: true}
	c := &Case{Name: "react-calculate"}
	p.Update(1, 2, c, RunResult{Run: 1, Status: StatusPass})
	p.Update(2, 2, c, RunResult{Run: 1, Status: StatusDrift})
	lines := strings.Split(b.String(), "\r")
	if len(lines) != 3 || lines[1] != "[███████████████░░░░░░░░░░░░░░░] 1/2 runs, 0 not passed  react-calculate" ||
		lines[2] != "[██████████████████████████████] 2/2 runs, 1 not passed  react-calculate\n" {
		t.Errorf("progress bar: %q", b.String())
	}
}
