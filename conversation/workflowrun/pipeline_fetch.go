package workflowrun

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"strings"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
	"golang.org/x/sync/errgroup"
)

// The sources phase (docs/workflows.md, "Pipelines"): an auto artifact with fetch is written
// by no model. Each of its items is the readable text of the http(s) URLs found in its
// fetch dependency's text (the same item of it, with foreach: itemRequest), fetched
// by Config.Fetcher, a few at once. A failed fetch is recorded in the text, never
// fatal: the item still succeeds.

// maxSourceFetches bounds the pages of one item fetched at once.
const maxSourceFetches = 4

// noURLs is the text of an item whose notes have no URL.
const noURLs = "No URLs were found in the notes."

// fetchingOff is why a URL was not fetched when the deployment has no fetcher.
const fetchingOff = "fetching is off in this deployment"

// fetchingRefused is why a URL was not fetched in a channel whose tool policy does
// not allow fetch_url (Config.FetchAllowed).
const fetchingRefused = "the channel's tool policy (TOOL_POLICY) does not allow fetch_url"

// sourceFetcher returns the fetcher of the turn's fetch artifacts, and why a URL is
// not fetched when it is nil: none in the deployment, or none allowed in the thread's
// channel (Config.FetchAllowed).
func (t pipelineRun) sourceFetcher() (conversation.SourceFetcher, string) {
	switch {
	case t.s.cfg.Fetcher == nil:
		return nil, fetchingOff
	case t.s.cfg.FetchAllowed != nil && !t.s.cfg.FetchAllowed(t.key.ChannelID):
		return nil, fetchingRefused
	}
	return t.s.cfg.Fetcher, ""
}

// runFetch runs one item of a fetch artifact: the URLs of its dependency's text
// (workflow.URLs, at most workflow.MaxFetchURLs), fetched concurrently, each kept as
// a "### title" section with its URL and its text (or why it was not fetched). A cut
// turn cuts the item: it is fetched again in the next part.
func (w worker) runFetch(ctx context.Context, job itemJob) itemResult {
	res := itemResult{job: job, attempts: 1}
	urls := workflow.URLs(job.req.Approved[job.req.Artifact.Fetch], workflow.MaxFetchURLs)
	if len(urls) == 0 {
		res.text = noURLs
		return res
	}
	pages := make([]string, len(urls))
	var g errgroup.Group
	g.SetLimit(maxSourceFetches)
	for i, u := range urls {
		g.Go(func() error {
			pages[i] = w.source(ctx, job, u, workflow.SourceChars(len(urls)))
			return nil
		})
	}
	_ = g.Wait() // a failed fetch is part of the text, never an error
	if ctx.Err() != nil {
		res.cut, res.attempts = true, 0
		return res
	}
	res.text = strings.Join(pages, "\n\n")
	return res
}

// source fetches url and returns its section of the item's text, which names url
// without its password, if it has one (as the fetcher's errors do), and keeps at most
// limit runes of the page's text.
func (w worker) source(ctx context.Context, job itemJob, url string, limit int) string {
	var (
		src conversation.SourcePage
		err error
	)
	if w.fetcher == nil {
		err = errors.New(cmp.Or(w.noFetch, fetchingOff))
	} else {
		src, err = w.fetcher.FetchSource(ctx, url)
	}
	shown := redactedURL(url)
	if err != nil {
		reason := history.Clip(strings.Join(strings.Fields(w.redact(err.Error())), " "), maxReason)
		if ctx.Err() == nil {
			w.log.Info("source not fetched", "artifact", job.artifact, "item", job.index, "url", shown, "reason", reason)
		}
		return "### " + shown + "\nSource: " + shown + "\nNot fetched: " + reason
	}
	title := strings.Join(strings.Fields(src.Title), " ")
	if title == "" {
		title = shown
	}
	// The page's own lines that look like an editor's notes stay in its text.
	text := strings.TrimSpace(workflow.UnmarkNotes(src.Text))
	if text == "" {
		text = "(no readable text)"
	}
	return "### " + title + "\nSource: " + shown + "\n" + clipSource(text, limit)
}

// redactedURL is raw with the password of its user information, if any, replaced
// by "xxxxx" (url.URL.Redacted); raw itself when it does not parse.
func redactedURL(raw string) string {
	u, err := neturl.Parse(raw)
	if err != nil {
		return raw
	}
	if _, ok := u.User.Password(); !ok {
		return raw
	}
	return u.Redacted()
}

// clipSource keeps the first limit runes of a page's text, saying so when it cuts.
func clipSource(text string, limit int) string {
	head := textcut.Runes(text, limit)
	if len(head) == len(text) {
		return text
	}
	return strings.TrimSpace(head) + fmt.Sprintf("\n[cut: the page has %d characters; the first %d are kept]", utf8.RuneCountInString(text), limit)
}
