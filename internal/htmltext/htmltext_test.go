package htmltext

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func TestWords(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		space    bool // *space after writing in after "x"
	}{
		{"", "x", false},
		{"a", "xa", false},
		{" a  b\n\tc ", "x a b c", true},
		{"\u00a0a", "x a", false},
		{"   ", "x", true},
	} {
		var b strings.Builder
		b.WriteString("x")
		space := false
		Words(tc.in, &space, func(w string) {
			if space {
				b.WriteByte(' ')
			}
			space = false
			b.WriteString(w)
		})
		if b.String() != tc.want || space != tc.space {
			t.Errorf("Words(%q) = %q, space %v; want %q, space %v", tc.in, b.String(), space, tc.want, tc.space)
		}
	}
}

func TestNonContent(t *testing.T) {
	for _, a := range []atom.Atom{atom.Script, atom.Style, atom.Nav, atom.Svg, atom.Iframe} {
		if !NonContent(a) {
			t.Errorf("NonContent(%v) = false", a)
		}
	}
	for _, a := range []atom.Atom{atom.P, atom.Div, atom.Footer, atom.Header, atom.Article, 0} {
		if NonContent(a) {
			t.Errorf("NonContent(%v) = true", a)
		}
	}
}

func TestSkip(t *testing.T) {
	z := html.NewTokenizer(strings.NewReader(
		`<p>a<div hidden>b<div>c</div><br/>d</div>e<x-y>f<x-y>g</x-y></x-y>h</p>`))
	var (
		s   Skip
		out strings.Builder
	)
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		tok := z.Token()
		if s.Token(tt, tok.Data) {
			continue
		}
		switch tt {
		case html.TextToken:
			out.WriteString(tok.Data)
		case html.StartTagToken:
			if tok.Data == "x-y" || len(tok.Attr) > 0 {
				s.Start(tok.Data)
			}
		}
	}
	if got, want := out.String(), "aeh"; got != want {
		t.Errorf("text outside skipped elements = %q, want %q", got, want)
	}
	if s.Skipping() {
		t.Error("still skipping at the end")
	}
}
