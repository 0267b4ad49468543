package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// blockingKnowledge holds every ReplaceSource until release is closed, telling
// entered when one starts.
type blockingKnowledge struct {
	conversation.Knowledge
	entered chan struct{}
	release chan struct{}
}

func (b *blockingKnowledge) ReplaceSource(ctx context.Context, _, _ string, _ conversation.Origin, _ []conversation.Chunk) (bool, error) {
	b.entered <- struct{}{}
	select {
	case <-b.release:
	case <-ctx.Done():
	}
	return true, nil
}

// TestUploadBounds (issue 25, item 7): with two uploads held in the store, a third
// is refused at once with 503 and Retry-After, and stored nothing; once they end,
// one token's uploads past its burst get 429 with Retry-After, while another token
// still uploads.
func TestUploadBounds(t *testing.T) {
	s, _, _ := testServer(t)
	kb := &blockingKnowledge{entered: make(chan struct{}, 10), release: make(chan struct{})}
	s.cfg.Knowledge = kb
	upload := func(secret, name string) *httptest.ResponseRecorder {
		w := postAs(t, s, secret, "/v1/knowledge/sources", map[string]string{"source": name, "content": "# Doc\n\ntext"})
		return w
	}
	var wg sync.WaitGroup
	for i := range DefaultUploadsInFlight {
		wg.Go(func() {
			if w := upload("ci-bot-secret-0123456789", fmt.Sprintf("held-%d.md", i)); w.Code != http.StatusCreated {
				t.Errorf("held upload %d: %d %s", i, w.Code, w.Body)
			}
		})
	}
	for range DefaultUploadsInFlight {
		<-kb.entered
	}
	third := make(chan *httptest.ResponseRecorder, 1)
	go func() { third <- upload("ci-bot-secret-0123456789", "third.md") }()
	select {
	case w := <-third:
		if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
			t.Errorf("a third upload in flight: %d, Retry-After %q: %s", w.Code, w.Header().Get("Retry-After"), w.Body)
		}
	case <-kb.entered:
		t.Errorf("a third upload reached the store while two were in flight")
		close(kb.release)
		<-third
		wg.Wait()
		return
	}
	close(kb.release)
	wg.Wait()
	// ci-bot's burst: it used 3 of its 10 above.
	codes := map[int]int{}
	for i := range DefaultUploadsPerMinute {
		w := upload("ci-bot-secret-0123456789", fmt.Sprintf("burst-%d.md", i))
		codes[w.Code]++
		if w.Code == http.StatusTooManyRequests && w.Header().Get("Retry-After") == "" {
			t.Errorf("429 without Retry-After")
		}
		for len(kb.entered) > 0 {
			<-kb.entered
		}
	}
	if codes[http.StatusTooManyRequests] == 0 || codes[http.StatusCreated] == 0 {
		t.Errorf("ci-bot's burst: %v; want some 201 and then 429", codes)
	}
	if w := upload("other-secret-0123456789", "other.md"); w.Code != http.StatusCreated {
		t.Errorf("another token's upload: %d %s", w.Code, w.Body)
	}
}

// TestUploadBoundsConfigured: Config's bounds replace the defaults: with 3 uploads a
// minute, a token's fourth upload in a row gets 429 naming that rate; with 1 in
// flight, a second upload while one is held gets 503.
func TestUploadBoundsConfigured(t *testing.T) {
	s, _, _ := testServer(t)
	cfg := s.cfg
	cfg.UploadsInFlight, cfg.UploadsPerMinute = 1, 3
	s = newServer(cfg)
	for i := range 3 {
		if w := post(t, s, "/v1/knowledge/sources", map[string]string{"source": fmt.Sprintf("doc-%d.md", i), "content": "# Doc\n\ntext"}); w.Code != http.StatusCreated {
			t.Fatalf("upload %d: %d %s", i+1, w.Code, w.Body)
		}
	}
	w := post(t, s, "/v1/knowledge/sources", map[string]string{"source": "doc-4.md", "content": "# Doc\n\ntext"})
	if w.Code != http.StatusTooManyRequests || !strings.Contains(w.Body.String(), "at most 3 documents a minute") {
		t.Errorf("a fourth upload in a row at 3 a minute: %d %s", w.Code, w.Body)
	}

	kb := &blockingKnowledge{entered: make(chan struct{}, 1), release: make(chan struct{})}
	s.cfg.Knowledge = kb
	held := make(chan int, 1)
	go func() {
		held <- postAs(t, s, "other-secret-0123456789", "/v1/knowledge/sources", map[string]string{"source": "held.md", "content": "# Doc\n\ntext"}).Code
	}()
	<-kb.entered
	w = postAs(t, s, "other-secret-0123456789", "/v1/knowledge/sources", map[string]string{"source": "second.md", "content": "# Doc\n\ntext"})
	close(kb.release)
	if code := <-held; code != http.StatusCreated {
		t.Errorf("the held upload: %d", code)
	}
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "at most 1 uploads at once") {
		t.Errorf("a second upload with 1 in flight allowed: %d %s", w.Code, w.Body)
	}
}

// hangingKnowledge is a knowledge base whose writes answer only when their context
// ends, and refuse a context without a deadline (a test of it cannot hang).
type hangingKnowledge struct{ conversation.Knowledge }

func (hangingKnowledge) ReplaceSource(ctx context.Context, _, _ string, _ conversation.Origin, _ []conversation.Chunk) (bool, error) {
	return false, waitOut(ctx)
}

func (hangingKnowledge) DeleteSource(ctx context.Context, _ string) error { return waitOut(ctx) }

func waitOut(ctx context.Context) error {
	if _, ok := ctx.Deadline(); !ok {
		return errors.New("hangingKnowledge: the context has no deadline: the call would hang")
	}
	<-ctx.Done()
	return ctx.Err()
}

// TestKnowledgeWritesAgainstAHangingStore: an upload and a delete whose store does
// not answer answer 503, the store did not answer in time, within their bounds
// (six times StoreTimeout for an upload), rather than holding the request, and
// with it one of the two upload slots, for as long as the store hangs.
func TestKnowledgeWritesAgainstAHangingStore(t *testing.T) {
	s := newServer(Config{Store: nopStore{}, Submitter: &countingSubmitter{}, Workflows: pitchSet(t), Knowledge: hangingKnowledge{},
		StoreTimeout: writeTimeout, Tokens: []Token{{Name: "ci-bot", Secret: writeSecret, Scopes: []Scope{ScopeKnowledgeWrite}}}})
	w := postAs(t, s, writeSecret, "/v1/knowledge/sources", map[string]string{"source": "doc.md", "content": "# Doc\n\ntext"})
	if w.Code != http.StatusServiceUnavailable || !strings.Contains(w.Body.String(), "did not answer in time") {
		t.Errorf("an upload: %d %s; want 503, the store did not answer in time", w.Code, w.Body)
	}
	d := requestAs(s, writeSecret, http.MethodDelete, "/v1/knowledge/sources/doc.md")
	if d.Code != http.StatusServiceUnavailable || !strings.Contains(d.Body.String(), "did not answer in time") {
		t.Errorf("a delete: %d %s; want 503, the store did not answer in time", d.Code, d.Body)
	}
}
