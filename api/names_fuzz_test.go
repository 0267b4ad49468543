package api

import (
	"path"
	"strings"
	"testing"
	"unicode"
)

// FuzzSourceName checks the API's name check (checkSourceName) on any string: a
// name it accepts is a clean relative path that holds no control or invisible
// format character (nothing a terminal, a log line or a prompt would act on), and
// ESC, BEL, a newline or U+202E anywhere is refused.
func FuzzSourceName(f *testing.F) {
	for _, s := range []string{"handbook/leave.md", "a\x1b]52;c;eA==\x07.md", "ok\nINFO forged.md", "../etc/passwd.txt",
		"x\u202egnp.md", "/abs.md", "a\\b.md", "отпуск.md", "a\x00.md", "dir/./x.md", "\xff.md"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		msg := checkSourceName(name)
		bad := strings.ContainsAny(name, "\x1b\x07\n\r\x00\u202e\u2066")
		if bad && msg == "" {
			t.Fatalf("checkSourceName(%q) accepted a control character", name)
		}
		if msg != "" {
			return
		}
		for _, r := range name {
			if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == unicode.ReplacementChar {
				t.Fatalf("checkSourceName(%q) accepted %U", name, r)
			}
		}
		if strings.HasPrefix(name, "/") || path.Clean(name) != name || strings.HasPrefix(name, "../") || name == ".." || strings.Contains(name, "\\") {
			t.Fatalf("checkSourceName(%q) accepted a path that is not clean and relative", name)
		}
	})
}
