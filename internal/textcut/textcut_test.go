package textcut_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/threadwright/threadwright/internal/textcut"
)

func TestIndex(t *testing.T) {
	for _, tc := range []struct {
		name string
		s    string
		n    int
		want int
	}{
		{"Empty", "", 3, 0},
		{"Zero", "abc", 0, 0},
		{"Negative", "abc", -1, 0},
		{"Inside", "abc", 2, 2},
		{"Exact", "abc", 3, 3},
		{"Beyond", "abc", 9, 3},
		{"Cyrillic", "привет", 2, 4},
		{"Emoji", "a😀b", 2, 5},
		{"InvalidByteIsOneRune", "a\xffb", 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := textcut.Index(tc.s, tc.n); got != tc.want {
				t.Errorf("Index(%q, %d) = %d, want %d", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

func TestRunes(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		n       int
		want    string
	}{
		{"Fits", "hello", 5, "hello"},
		{"Cut", "hello", 3, "hel"},
		{"Zero", "hello", 0, ""},
		{"Cyrillic", "привет, мир", 6, "привет"},
		{"Japanese", "こんにちは世界", 5, "こんにちは"},
		{"InvalidKept", "a\xff\xfeb", 3, "a\xff\xfe"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := textcut.Runes(tc.s, tc.n); got != tc.want {
				t.Errorf("Runes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

func TestBytes(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		n       int
		want    string
	}{
		{"Fits", "hello", 5, "hello"},
		{"Cut", "hello", 2, "he"},
		{"Zero", "hello", 0, ""},
		{"Negative", "hello", -4, ""},
		{"RuneBoundary", "aпb", 2, "a"},
		{"WholeRune", "aпb", 3, "aп"},
		{"FourByteRune", "😀😀", 7, "😀"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := textcut.Bytes(tc.s, tc.n); got != tc.want {
				t.Errorf("Bytes(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

// spaceOrPunct is what an option's title drops before its "…" (package agents).
func spaceOrPunct(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }

func TestEllipsis(t *testing.T) {
	for _, tc := range []struct {
		name, s string
		n       int
		trim    func(rune) bool
		want    string
	}{
		{"Fits", "hello", 5, nil, "hello"},
		{"EmptyFits", "", 0, nil, ""},
		{"Cut", "hello world", 5, nil, "hell…"},
		{"KeepsSpaceWithoutTrim", "ab cd", 4, nil, "ab …"},
		{"TrimsSpace", "ab cd", 4, textcut.Cutset(" "), "ab…"},
		{"CutsetKeepsOthers", "ab\tcd", 4, textcut.Cutset(" "), "ab\t…"},
		{"CutsetOfSpaceAndNewline", "ab \ncd", 5, textcut.Cutset(" \n"), "ab…"},
		{"UnicodeSpace", "ab\u00a0cd", 4, unicode.IsSpace, "ab…"},
		{"TrimsPunctuation", "Plan A, then B", 8, spaceOrPunct, "Plan A…"},
		{"OneRune", "hello", 1, nil, "…"},
		{"Zero", "hello", 0, nil, ""},
		{"Negative", "hello", -1, nil, ""},
		{"Cyrillic", "привет, мир", 8, spaceOrPunct, "привет…"},
		{"AllTrimmed", "   x", 3, unicode.IsSpace, "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := textcut.Ellipsis(tc.s, tc.n, tc.trim); got != tc.want {
				t.Errorf("Ellipsis(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

func TestBytesMark(t *testing.T) {
	const mark = textcut.Truncated // 15 bytes
	for _, tc := range []struct {
		name, s string
		n       int
		want    string
	}{
		{"Fits", "hello", 5, "hello"},
		{"Cut", strings.Repeat("a", 30), 20, "aaaaa" + mark},
		{"RuneBoundary", "aaaaп" + strings.Repeat("b", 30), 20, "aaaa" + mark},
		{"MarkOnly", strings.Repeat("a", 30), 15, mark},
		{"MarkLongerThanBound", strings.Repeat("a", 30), 4, mark},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := textcut.BytesMark(tc.s, tc.n, mark); got != tc.want {
				t.Errorf("BytesMark(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

func TestAtBreak(t *testing.T) {
	long := strings.Repeat("x", 300)
	for _, tc := range []struct {
		name, s   string
		n, window int
		want      string
	}{
		{"Fits", "hello world  ", 13, 200, "hello world  "},
		{"AtWord", "hello world again", 14, 200, "hello world"},
		{"AtSpaceAfterWord", "hello world again", 11, 200, "hello"},
		{"AtLine", "first line\nsecond", 14, 200, "first line"},
		{"LastBreakWins", "a b\nc d e", 8, 200, "a b\nc d"},
		{"NoBreak", "abcdefgh", 5, 200, "abcde"},
		{"BreakAtStartIgnored", " abcdefgh", 5, 200, " abcd"},
		{"BreakTooFarBack", "a " + long, 250, 200, "a " + long[:248]},
		{"TrailingSpaceTrimmed", "ab \t \tcd", 6, 0, "ab"},
		{"Cyrillic", "привет мир и все", 12, 200, "привет мир"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := textcut.AtBreak(tc.s, tc.n, tc.window, "\n "); got != tc.want {
				t.Errorf("AtBreak(%q, %d, %d) = %q, want %q", tc.s, tc.n, tc.window, got, tc.want)
			}
		})
	}
}

func TestNoted(t *testing.T) {
	note := func(kept, total int) string {
		return fmt.Sprintf("\n[… the first %d of %d characters are shown]", kept, total)
	}
	for _, tc := range []struct {
		name, s string
		n       int
		want    string
	}{
		{"Fits", "hello", 5, "hello"},
		{"Cut", "hello world", 5, "hello\n[… the first 5 of 11 characters are shown]"},
		{"Cyrillic", "привет мир", 6, "привет\n[… the first 6 of 10 characters are shown]"},
		{"Zero", "abc", 0, "\n[… the first 0 of 3 characters are shown]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := textcut.Noted(tc.s, tc.n, note); got != tc.want {
				t.Errorf("Noted(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
			}
		})
	}
}

// FuzzCut checks every cutter on valid UTF-8: the result is valid UTF-8, within its
// bound, a beginning of the input (before any mark or note), and the input itself
// when it fits.
func FuzzCut(f *testing.F) {
	for _, s := range []string{"", "hello world", "привет, мир", "こんにちは 世界", "a😀b\n c", "  \n\t"} {
		f.Add(s, 3, 2)
	}
	f.Fuzz(func(t *testing.T, s string, n, window int) {
		if !utf8.ValidString(s) {
			t.Skip()
		}
		n, window = n%1000, window%1000
		runes := utf8.RuneCountInString(s)
		check := func(name, got string, size func(string) int, bound int, fits bool) {
			t.Helper()
			if !utf8.ValidString(got) {
				t.Fatalf("%s(%q, %d) = %q: not valid UTF-8", name, s, n, got)
			}
			if size(got) > max(bound, 0) {
				t.Fatalf("%s(%q, %d) = %q: longer than %d", name, s, n, got, bound)
			}
			if fits && got != s {
				t.Fatalf("%s(%q, %d) = %q: changed a text that fits", name, s, n, got)
			}
		}
		count := utf8.RuneCountInString
		length := func(s string) int { return len(s) }

		got := textcut.Runes(s, n)
		check("Runes", got, count, n, runes <= n)
		if !strings.HasPrefix(s, got) || textcut.Index(s, n) != len(got) {
			t.Fatalf("Runes(%q, %d) = %q: not its beginning at Index", s, n, got)
		}
		got = textcut.Bytes(s, n)
		check("Bytes", got, length, n, len(s) <= n)
		if !strings.HasPrefix(s, got) {
			t.Fatalf("Bytes(%q, %d) = %q: not its beginning", s, n, got)
		}
		for _, trim := range []func(rune) bool{nil, unicode.IsSpace, spaceOrPunct, textcut.Cutset(" \n")} {
			got = textcut.Ellipsis(s, n, trim)
			check("Ellipsis", got, count, n, runes <= n)
			if got != s && !strings.HasPrefix(s, strings.TrimSuffix(got, "…")) {
				t.Fatalf("Ellipsis(%q, %d) = %q: not its beginning", s, n, got)
			}
		}
		const mark = textcut.Truncated
		if n >= len(mark) {
			got = textcut.BytesMark(s, n, mark)
			check("BytesMark", got, length, n, len(s) <= n)
		}
		got = textcut.AtBreak(s, n, window, "\n ")
		check("AtBreak", got, count, n, runes <= n)
		if !strings.HasPrefix(s, got) {
			t.Fatalf("AtBreak(%q, %d) = %q: not its beginning", s, n, got)
		}
		got = textcut.Noted(s, n, func(kept, total int) string {
			if kept != max(n, 0) || total != runes {
				t.Fatalf("Noted(%q, %d): note(%d, %d), want note(%d, %d)", s, n, kept, total, max(n, 0), runes)
			}
			return "[cut]"
		})
		check("Noted", strings.TrimSuffix(got, "[cut]"), count, n, runes <= n)
	})
}
