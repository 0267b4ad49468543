package demo

import (
	"context"
	"errors"
	"strings"

	"github.com/threadwright/threadwright/conversation"
)

// SourceFetcher is the offline demo's conversation.SourceFetcher, for the blog's
// sources phase in `threadwright dev` without a model (docs/workflows.md, "Pipelines"): it
// reads nothing from the network. A URL of the demo's own placeholder sources
// (https://example.com/demo/<slug>, the canned research notes' sources) gets a canned
// page: a title naming the demo, the note's fact, a sentence or two of context from
// the canned section it belongs to, and a line that says the page is the demo's. Any
// other URL gets ErrOffline, which the sources phase records as "Not fetched". The
// same URL always gets the same page. The zero value is ready to use.
type SourceFetcher struct{}

// ErrOffline is the error of every URL but the demo's own placeholder sources.
var ErrOffline = errors.New("the offline demo fetches nothing from the internet")

// demoPageNote ends every canned page. It is in parentheses, so that a draft quoting
// the page quotes its content rather than this note.
const demoPageNote = "(A page of threadwright's offline demo model: it wrote this page, and nothing was fetched from the internet.)"

// FetchSource returns the canned page of a demo source, ErrOffline for any other
// URL, or ctx's error once ctx has ended.
func (SourceFetcher) FetchSource(ctx context.Context, url string) (conversation.SourcePage, error) {
	if err := ctx.Err(); err != nil {
		return conversation.SourcePage{}, err
	}
	slug, ok := strings.CutPrefix(url, demoSourceBase)
	if !ok || slug == "" {
		return conversation.SourcePage{}, ErrOffline
	}
	slug = strings.Trim(slug, "/")
	title, text := demoPage(slug)
	return conversation.SourcePage{URL: url, Title: title, Text: text}, nil
}

// demoPage writes the canned page of the demo source slug: the fact of the note that
// cites it and its context (the brief of the pool's section it belongs to, or the
// generic fact's own), or, for a slug no note cites, a placeholder page.
func demoPage(slug string) (title, text string) {
	title = "Demo library: " + upperFirst(strings.ReplaceAll(slug, "-", " "))
	fact, about := demoFact(slug)
	if fact == "" {
		return title, "This is a placeholder page of the offline demo: no note of the demo cites it.\n\n" + demoPageNote
	}
	return title, sentence(fact) + " " + about + "\n\n" + demoPageNote
}

// demoFact returns the fact whose source is slug and the context its page gives:
// for the pool's sections, the section's brief; for the generic facts, their own
// sentence. Both are "" for a slug no fact has.
func demoFact(slug string) (fact, about string) {
	for _, s := range blogPool {
		for _, f := range s.Facts {
			if f.Slug == slug {
				return f.Text, s.Brief
			}
		}
	}
	for _, f := range blogGenericFacts {
		if f.Slug == slug {
			return f.Text, genericPageContext[slug]
		}
	}
	return "", ""
}

// genericPageContext is what the page of a generic fact (blogGenericFacts) says
// besides the fact: one sentence of 8 to 35 words, without quotation marks, that a
// draft can quote.
var genericPageContext = map[string]string{
	"routines":        "Teams that swapped an old meeting for the new habit kept it far longer than teams that simply added one more thing to the week.",
	"team-agreements": "A short agreement that everyone can find and point to settles most disagreements before they start.",
	"trial-periods":   "Knowing that the team will look back on the change together makes people willing to give it an honest try.",
	"short-updates":   "A few clear sentences that take a minute to read get more attention than a page that takes ten.",
	"visible-habits":  "Seeing colleagues keep a habit every day turns it from a rule someone announced into the way the team works.",
	"async-ownership": "A question with no named owner tends to wait until the next meeting, which defeats the point of working asynchronously.",
}
