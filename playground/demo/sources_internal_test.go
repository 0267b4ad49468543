package demo

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestSourceFetcherPages: every placeholder source of the demo's canned notes gets a
// page that says the note's fact, says it is the demo's, is the same on every fetch,
// and has a sentence that a draft quotes besides the facts it already states.
func TestSourceFetcherPages(t *testing.T) {
	ctx := context.Background()
	var f SourceFetcher
	sections := map[string][]researchNote{}
	for _, s := range blogPool {
		sections[s.Title] = cannedNotes(s.Title)
	}
	for _, title := range []string{"Getting started with Go generics", "Measuring the results", "A heading of the team"} {
		sections[title] = cannedNotes(title) // generic notes, chosen by the heading
	}
	for title, notes := range sections {
		var sources []string
		for _, n := range notes {
			p, err := f.FetchSource(ctx, n.URL)
			if err != nil {
				t.Fatalf("%s: %v", n.URL, err)
			}
			if p.URL != n.URL || !strings.HasPrefix(p.Title, "Demo library: ") ||
				!strings.Contains(p.Text, sentence(n.Fact)) || !strings.Contains(p.Text, "offline demo") {
				t.Errorf("%s: page %+v does not give the note %q as the demo's", n.URL, p, n.Fact)
			}
			if again, _ := f.FetchSource(ctx, n.URL); again != p {
				t.Errorf("%s: another page on the second fetch", n.URL)
			}
			sources = append(sources, "### "+p.Title+"\nSource: "+p.URL+"\n"+p.Text)
		}
		q := quoteSource(strings.Join(sources, "\n\n"), notes)
		if !strings.Contains(q, "([demo source]("+notes[0].URL+"))") || !strings.HasPrefix(q, "As “Demo library: ") {
			t.Errorf("%s: the quote %q is not from its first page %s", title, q, notes[0].URL)
		}
		for _, n := range notes {
			if strings.Contains(q, n.Fact) {
				t.Errorf("%s: the quote %q repeats a note", title, q)
			}
		}
	}
}

// TestSourceFetcherOffline: a URL that is not the demo's own is not fetched (the
// sources phase records why), and an ended ctx ends a fetch of the demo's own.
func TestSourceFetcherOffline(t *testing.T) {
	var f SourceFetcher
	for _, url := range []string{"https://go.dev/doc/", "https://example.com/other", "https://example.com/demo/", "http://127.0.0.1:1/"} {
		if p, err := f.FetchSource(context.Background(), url); !errors.Is(err, ErrOffline) {
			t.Errorf("%s: page %+v, error %v; want ErrOffline", url, p, err)
		}
	}
	p, err := f.FetchSource(context.Background(), demoSourceBase+"no-such-note")
	if err != nil || !strings.Contains(p.Text, "placeholder") {
		t.Errorf("a demo URL no note cites: page %+v, error %v", p, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.FetchSource(ctx, demoSourceBase+"standup-cost"); !errors.Is(err, context.Canceled) {
		t.Errorf("with ctx ended: error %v", err)
	}
}
