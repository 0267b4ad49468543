package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/knowledge"
)

// countingSubmitter accepts inputs and counts them.
type countingSubmitter struct{ n int }

func (c *countingSubmitter) Submit(context.Context, conversation.Input) (bool, error) {
	c.n++
	return true, nil
}

// nopStore has no thread: a start's run never appears (202).
type nopStore struct{ Store }

func (nopStore) Forwarded(context.Context, string) ([]conversation.Key, error) { return nil, nil }

func (nopStore) Input(_ context.Context, id string) (conversation.Input, error) {
	return conversation.Input{ID: id, Status: conversation.InputPending}, nil
}

// memKnowledge keeps what ReplaceSource stored.
type memKnowledge struct {
	conversation.Knowledge
	stored []string
}

func (m *memKnowledge) ReplaceSource(_ context.Context, source, _ string, _ conversation.Origin, _ []conversation.Chunk) (bool, error) {
	m.stored = append(m.stored, source)
	return true, nil
}

const sizedYAML = `
name: sized
title: Sized note
inputs:
  - id: topic
    label: What is it about?
    required: true
  - id: words
    label: How many words?
    type: number
artifacts:
  - id: plan
    title: Outline
`

func testServer(t *testing.T) (*Server, *countingSubmitter, *memKnowledge) {
	t.Helper()
	def, err := workflow.Parse("sized.yaml", []byte(sizedYAML))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	sub, kb := &countingSubmitter{}, &memKnowledge{}
	s := newServer(Config{Store: nopStore{}, Submitter: sub, Workflows: set, Knowledge: kb, TeamID: "T1",
		Tokens: []Token{{Name: "ci-bot", Secret: "ci-bot-secret-0123456789", Scopes: []Scope{ScopeAdmin}},
			{Name: "other", Secret: "other-secret-0123456789", Scopes: []Scope{ScopeKnowledgeWrite}}}, Wait: 10 * time.Millisecond})
	return s, sub, kb
}

func post(t *testing.T, s *Server, path string, body any) *httptest.ResponseRecorder {
	t.Helper()
	return postAs(t, s, "ci-bot-secret-0123456789", path, body)
}

// postAs posts body as JSON to path with the bearer secret.
func postAs(t *testing.T, s *Server, secret, path string, body any) *httptest.ResponseRecorder {
	t.Helper()
	return postWith(t, s, secret, path, body, nil)
}

// requestAs sends method path, with no body, with the bearer secret.
func requestAs(s *Server, secret, method, path string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, path, nil)
	r.Header.Set("Authorization", "Bearer "+secret)
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// postWith is postAs with the headers of header besides.
func postWith(t *testing.T, s *Server, secret, path string, body any, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(b))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+secret)
	for k, vs := range header {
		r.Header[k] = vs
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// TestStartRunValidatesInputsAsTheModal: a number input whose value is not a number
// or a value longer than the modal's fields take is refused with 422, as the
// inputs modal refuses it (conversation.FieldError, plain_text_input's
// max_length), and nothing is submitted; a number with spaces passes.
func TestStartRunValidatesInputsAsTheModal(t *testing.T) {
	s, sub, _ := testServer(t)
	w := post(t, s, "/v1/runs", map[string]any{"workflow": "sized", "channel": "C1",
		"inputs": map[string]string{"topic": "meal kits", "words": "lots"}})
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "body.inputs.words") || sub.n != 0 {
		t.Fatalf("a non-number for a number input: %d %s, %d submitted", w.Code, w.Body, sub.n)
	}
	// Longer than the modal's fields take (3000 characters): refused too.
	w = post(t, s, "/v1/runs", map[string]any{"workflow": "sized", "channel": "C1",
		"inputs": map[string]string{"topic": strings.Repeat("meal kits ", 50_000)}})
	if w.Code != http.StatusUnprocessableEntity || !strings.Contains(w.Body.String(), "body.inputs.topic") || sub.n != 0 {
		t.Fatalf("a 500 000-character input: %d %s, %d submitted", w.Code, w.Body, sub.n)
	}
	w = post(t, s, "/v1/runs", map[string]any{"workflow": "sized", "channel": "C1",
		"inputs": map[string]string{"topic": "meal kits", "words": "1 500"}})
	if w.Code != http.StatusAccepted || sub.n != 1 {
		t.Fatalf("a valid start: %d %s, %d submitted", w.Code, w.Body, sub.n)
	}
}

// TestUploadBoundsBytes: a document larger than knowledge.MaxFileSize bytes is
// refused (as threadwright ingest skips such a file) even when it has fewer
// characters than that.
func TestUploadBoundsBytes(t *testing.T) {
	s, _, kb := testServer(t)
	big := strings.Repeat("€", knowledge.MaxFileSize/3+1000) // 3 bytes each: over the bound in bytes, not in characters
	w := post(t, s, "/v1/knowledge/sources", map[string]string{"source": "big.txt", "content": big})
	if w.Code != http.StatusUnprocessableEntity && w.Code != http.StatusRequestEntityTooLarge || len(kb.stored) != 0 {
		t.Fatalf("a %d-byte document: %d, stored %v", len(big), w.Code, kb.stored)
	}
	w = post(t, s, "/v1/knowledge/sources", map[string]string{"source": "small.txt", "content": "twenty days"})
	if w.Code != http.StatusCreated || len(kb.stored) != 1 {
		t.Fatalf("a small document: %d %s", w.Code, w.Body)
	}
}

// TestEveryOperationNeedsAToken: every operation of the document answers 401 as a
// problem document without a token or with a wrong one, before it reads its body.
func TestEveryOperationNeedsAToken(t *testing.T) {
	s, sub, kb := testServer(t)
	doc := s.api.OpenAPI()
	n := 0
	for p, item := range doc.Paths {
		path := strings.NewReplacer("{id}", "T1-C1-1.2", "{artifact}", "plan", "{team}", "T1", "{channel}", "C1",
			"{thread_ts}", "1.2", "{source}", "a.md").Replace(p)
		for _, o := range []struct {
			method string
			op     *huma.Operation
		}{{"GET", item.Get}, {"POST", item.Post}, {"PUT", item.Put}, {"PATCH", item.Patch}, {"DELETE", item.Delete}} {
			if o.op == nil {
				continue
			}
			method := o.method
			for _, auth := range []string{"", "Bearer wrong-secret-0123456789", "Basic Y2ktYm90OmNpLWJvdC1zZWNyZXQtMDEyMzQ1Njc4OQ=="} {
				r := httptest.NewRequest(method, path, strings.NewReader(`{"revision":1,"workflow":"sized","channel":"C1","source":"a.md","content":"x"}`))
				r.Header.Set("Content-Type", "application/json")
				if auth != "" {
					r.Header.Set("Authorization", auth)
				}
				w := httptest.NewRecorder()
				s.ServeHTTP(w, r)
				if w.Code != http.StatusUnauthorized || w.Header().Get("Content-Type") != "application/problem+json" || w.Header().Get("WWW-Authenticate") == "" {
					t.Errorf("%s %s with %q: %d %q", method, path, auth, w.Code, w.Header().Get("Content-Type"))
				}
			}
			n++
		}
	}
	if n < 13 || sub.n != 0 || len(kb.stored) != 0 {
		t.Errorf("%d operations checked; %d inputs submitted, %v stored", n, sub.n, kb.stored)
	}
}

// TestUploadAllowsASlowBody: a document that takes longer than huma's default 5 s
// body read timeout to arrive (a 10 MB upload on a slow link) is still read.
func TestUploadAllowsASlowBody(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 6 s")
	}
	s, _, kb := testServer(t)
	srv := httptest.NewServer(s)
	defer srv.Close()
	pr, pw := io.Pipe()
	go func() {
		_, _ = pw.Write([]byte(`{"source": "slow.md", "content": "# Slow`))
		<-time.After(6 * time.Second) // the link is slow: the rest comes later
		_, _ = pw.Write([]byte(`\n\nTwenty days."}`))
		_ = pw.Close()
	}()
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/v1/knowledge/sources", pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer ci-bot-secret-0123456789")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusCreated || len(kb.stored) != 1 {
		t.Fatalf("a slow upload: %d %s", resp.StatusCode, body)
	}
}

// failedStartStore: the start's command input failed (the bot could not post the
// thread's root message) and forwarded nothing.
type failedStartStore struct{ nopStore }

func (failedStartStore) Input(_ context.Context, id string) (conversation.Input, error) {
	return conversation.Input{ID: id, Status: conversation.InputFailed}, nil
}

// TestStartRunThatFailedSaysSo: when the start's command failed in the channel (no
// thread was posted), POST /v1/runs answers 502 at once, not 202 after its wait
// for a run that will never exist.
func TestStartRunThatFailedSaysSo(t *testing.T) {
	s, sub, _ := testServer(t)
	cfg := s.cfg
	cfg.Store, cfg.Wait = failedStartStore{}, 3*time.Second
	s = newServer(cfg) // its store wrapped as New wraps it (answeringStore)
	w := post(t, s, "/v1/runs", map[string]any{"workflow": "sized", "channel": "C1", "inputs": map[string]string{"topic": "meal kits"}})
	if w.Code != http.StatusBadGateway || w.Header().Get("Content-Type") != "application/problem+json" || sub.n != 1 {
		t.Fatalf("a start whose command failed: %d %s", w.Code, w.Body)
	}
}
