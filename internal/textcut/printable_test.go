package textcut

import (
	"strings"
	"testing"
)

// TestPrintable: terminal escapes (an OSC 52 clipboard write, a cursor move), BEL,
// newlines that would forge an output line and a bidirectional override are escaped
// visibly; ordinary text, Cyrillic and emoji are kept.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"handbook/leave.md":            "handbook/leave.md",
		"отпуск 🌴":                     "отпуск 🌴",
		"x\x1b]52;c;ZWNobyBoaQ==\x07y": `x\x1b]52;c;ZWNobyBoaQ==\x07y`,
		"ok\nINFO forged line":         `ok\x0aINFO forged line`,
		"a\u202egnp.exe":               `a\u202egnp.exe`,
		"\u009b31m red":                `\u009b31m red`,
		"bad \xff byte":                `bad \ufffd byte`,
	} {
		got := Printable(in)
		if got != want {
			t.Errorf("Printable(%q) = %q; want %q", in, got, want)
		}
		if strings.ContainsAny(got, "\x1b\x07\n\u202e") || Unprintable(got) {
			t.Errorf("Printable(%q) = %q still holds a control character", in, got)
		}
	}
}
