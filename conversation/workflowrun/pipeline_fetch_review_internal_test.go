package workflowrun

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// failingFetcher fails every fetch.
type failingFetcher struct{}

func (failingFetcher) FetchSource(context.Context, string) (conversation.SourcePage, error) {
	return conversation.SourcePage{}, errors.New("HTTP 500")
}

// TestRunFetchHidesURLPasswords: a URL with a password in it (https://user:pw@host)
// is fetched with it, but the password is neither logged nor kept in the item's
// text (shown in the thread, given to the model), as fetch_url's own errors hide it.
func TestRunFetchHidesURLPasswords(t *testing.T) {
	var logs bytes.Buffer
	w := testWorker(failingFetcher{})
	w.log = slog.New(slog.NewTextHandler(&logs, nil))
	a := &workflow.Artifact{ID: "sources", Mode: workflow.ModeAuto, Fetch: "research"}
	job := itemJob{artifact: "sources", req: conversation.ArtifactRequest{Artifact: a, Approved: map[string]string{"research": "See https://bob:s3cret@pages.test/private."}}}
	r := w.runFetch(t.Context(), job)
	if strings.Contains(r.text, "s3cret") || !strings.Contains(r.text, "Source: https://bob:xxxxx@pages.test/private\n") {
		t.Errorf("item text = %q; want the URL without its password", r.text)
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("log = %q; want no password", logs.String())
	}
}

// pageFetcher serves one page with text.
type pageFetcher struct{ text string }

func (f pageFetcher) FetchSource(_ context.Context, url string) (conversation.SourcePage, error) {
	return conversation.SourcePage{URL: url, Title: "Changelog", Text: f.text}, nil
}

// TestRunFetchKeepsPageLinesThatLookLikeNotes: a fetched page's own line in italics
// such as "_Updated: March 2024_" (a Markdown page's date line) stays in the item's
// text: it is not taken for an editor's revision note (workflow.SplitNotes, applied
// when the item is recorded and whenever a checkpoint is read), which would drop it
// from the page and show it on the card as the editor's note.
func TestRunFetchKeepsPageLinesThatLookLikeNotes(t *testing.T) {
	page := "# Changelog\n_Updated: March 2024_\n\nVersion 2 ships the batch mode.\n*Written: by the team*"
	a := &workflow.Artifact{ID: "sources", Mode: workflow.ModeAuto, Fetch: "research"}
	job := itemJob{artifact: "sources", req: conversation.ArtifactRequest{Artifact: a, Approved: map[string]string{"research": "See https://pages.test/changelog.md"}}}
	r := testWorker(pageFetcher{text: page}).runFetch(t.Context(), job)
	text, note := workflow.SplitNotes(r.text)
	if note != "" || !strings.Contains(text, "Updated: March 2024") || !strings.Contains(text, "Written: by the team") {
		t.Errorf("item text %q splits into %q and note %q; want the page's lines kept, no note", r.text, text, note)
	}
}
