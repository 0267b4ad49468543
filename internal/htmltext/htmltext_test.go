package htmltext

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

func TestWriterText(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		space    bool // a space pending after writing in after "x"
	}{
		{"", "x", false},
		{"a", "xa", false},
		{" a  b\n\tc ", "x a b c", true},
		{"\u00a0a", "x a", false},
		{"   ", "x", true},
		{"é\u2003ü", "xé ü", false},
	} {
		w := writer{limit: 100}
		word(&w, "x")
		w.text([]byte(tc.in))
		if string(w.b) != tc.want || w.space != tc.space {
			t.Errorf("text(%q) after x = %q, space %v; want %q, space %v", tc.in, w.b, w.space, tc.want, tc.space)
		}
	}
}

func TestWriterLimit(t *testing.T) {
	w := writer{limit: 6}
	w.text([]byte("ab cd\u00e9f"))
	if string(w.b) != "ab cd" || !w.cut {
		t.Errorf("b = %q, cut %v; want %q cut at the limit before é", w.b, w.cut, "ab cd")
	}
	word(&w, "more")
	if string(w.b) != "ab cd" {
		t.Errorf("b = %q after the cut; want nothing more", w.b)
	}
}

func TestSkip(t *testing.T) {
	z := html.NewTokenizer(strings.NewReader(
		`<p>a<div hidden>b<div>c</div><br/>d</div>e<x-y>f<x-y>g</x-y></x-y>h</p>`))
	var (
		s   skip
		out strings.Builder
	)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		name, hasAttr := z.TagName()
		if s.token(tt, name) {
			continue
		}
		switch tt {
		case html.TextToken:
			out.Write(z.Text())
		case html.StartTagToken:
			if string(name) == "x-y" || hasAttr {
				s.start(name)
			}
		}
	}
	if got, want := out.String(), "aeh"; got != want {
		t.Errorf("text outside skipped elements = %q, want %q", got, want)
	}
	if s.active() {
		t.Error("still skipping at the end")
	}
}

func TestLongestRun(t *testing.T) {
	for s, want := range map[string]int{"": 0, "a": 0, "`a``b```": 3, "````": 4} {
		if got := longestRun([]byte(s), '`'); got != want {
			t.Errorf("longestRun(%q) = %d, want %d", s, got, want)
		}
	}
}
