package conversation

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// failingFetcher fails every fetch.
type failingFetcher struct{}

func (failingFetcher) FetchSource(context.Context, string) (SourcePage, error) {
	return SourcePage{}, errors.New("HTTP 500")
}

// TestRunFetchHidesURLPasswords: a URL with a password in it (https://user:pw@host)
// is fetched with it, but the password is neither logged nor kept in the item's
// text (shown in the thread, given to the model), as fetch_url's own errors hide it.
func TestRunFetchHidesURLPasswords(t *testing.T) {
	var logs bytes.Buffer
	w := testWorker(failingFetcher{})
	w.log = slog.New(slog.NewTextHandler(&logs, nil))
	a := &workflow.Artifact{ID: "sources", Mode: workflow.ModeAuto, Fetch: "research"}
	job := itemJob{artifact: "sources", req: ArtifactRequest{Artifact: a, Approved: map[string]string{"research": "See https://bob:s3cret@pages.test/private."}}}
	r := w.runFetch(t.Context(), job)
	if strings.Contains(r.text, "s3cret") || !strings.Contains(r.text, "Source: https://bob:xxxxx@pages.test/private\n") {
		t.Errorf("item text = %q; want the URL without its password", r.text)
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Errorf("log = %q; want no password", logs.String())
	}
}
