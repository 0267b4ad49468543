package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// onceBackend is a Store and a Submitter that keep an input id once, as the intake
// and the stores do: a repeat is not taken (accepted false), nor is any input while
// refuse is set (a flood limit); while spooling is set, a repeat is taken (accepted
// true) and not kept, as the spool takes an input it does not hold while the
// database is down. Each start kept has its thread at once, 1.2 in its channel,
// whose run is a running sized run. Input fails with lookupErr, and the next
// lookupFails lookups with conversation.ErrUnavailable; it gives the inputs of
// undecodable as their payload did not decode.
type onceBackend struct {
	runStore
	refuse, spooling bool
	lookupErr        error
	lookupFails      int
	undecodable      map[string]bool
	// inSpool are the inputs waiting in the spool (Spooled); drained, when set, is
	// moved into kept by the drain as Spooled is asked about it.
	inSpool map[string]conversation.Input
	drained bool

	mu      sync.Mutex
	kept    map[string]conversation.Input
	submits int
}

func newOnceBackend() *onceBackend {
	ws := &workflow.State{Name: "sized", StartedBy: "api:ci-bot", Status: workflow.RunRunning,
		Artifacts: map[string]*workflow.ArtifactState{"plan": {Status: workflow.StatusPending}}}
	return &onceBackend{runStore: runStore{ws: ws}, kept: map[string]conversation.Input{}}
}

func (b *onceBackend) Submit(ctx context.Context, in conversation.Input) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.submits++
	if _, ok := b.kept[in.ID]; ok || b.refuse {
		return b.spooling && !b.refuse, ctx.Err()
	}
	if _, ok := b.inSpool[in.ID]; ok {
		return false, ctx.Err() // the spool takes an id once
	}
	b.kept[in.ID] = in
	return true, ctx.Err()
}

func (b *onceBackend) Input(ctx context.Context, id string) (conversation.Input, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lookupErr != nil {
		return conversation.Input{}, b.lookupErr
	}
	if b.lookupFails > 0 {
		b.lookupFails--
		return conversation.Input{}, conversation.ErrUnavailable
	}
	in, ok := b.kept[id]
	if !ok {
		return conversation.Input{}, conversation.ErrNotFound
	}
	in.Status = conversation.InputDone
	if b.undecodable[id] {
		in.Command = nil
		return in, &conversation.UndecodableError{Input: in, Err: errors.New("unexpected end of JSON input")}
	}
	return in, ctx.Err()
}

func (b *onceBackend) Forwarded(ctx context.Context, id string) ([]conversation.Key, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	in, ok := b.kept[id]
	if !ok {
		return nil, ctx.Err()
	}
	return []conversation.Key{{TeamID: in.Key.TeamID, ChannelID: in.Key.ChannelID, ThreadTS: "1.2"}}, ctx.Err()
}

// Spooled returns id as the spool holds it; with drained, the drain stores it first
// (it is in the store, no longer in the spool, by the time this answers).
func (b *onceBackend) Spooled(ctx context.Context, id string) (*conversation.Input, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	in, ok := b.inSpool[id]
	switch {
	case !ok:
		return nil, ctx.Err()
	case b.drained:
		delete(b.inSpool, id)
		b.kept[id] = in
		return nil, ctx.Err()
	}
	return &in, ctx.Err()
}

// submitted returns the number of Submit calls so far.
func (b *onceBackend) submitted() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.submits
}

// keptIDs returns the ids of the inputs kept.
func (b *onceBackend) keptIDs() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var ids []string
	for id := range b.kept {
		ids = append(ids, id)
	}
	return ids
}

// keyedAPI is an API on b for the sized workflow, with the tokens ci-bot and other,
// both allowed to start runs.
func keyedAPI(t *testing.T, b *onceBackend) *Server {
	s, _, _ := testServer(t)
	cfg := s.cfg
	cfg.Store, cfg.Submitter, cfg.Wait, cfg.StoreTimeout = b, b, time.Second, time.Second
	cfg.Tokens = []Token{{Name: "ci-bot", Secret: "ci-bot-secret-0123456789", Scopes: []Scope{ScopeRunsWrite}},
		{Name: "other", Secret: "other-secret-0123456789", Scopes: []Scope{ScopeRunsWrite}}}
	return newServer(cfg)
}

// emptyKey, given to startKeyed, sends the Idempotency-Key header with no value.
const emptyKey = "\x00empty"

// startKeyed posts a start of sized in channel with inputs, as secret, with
// Idempotency-Key key ("": none); it returns the status, the input id and the body.
func startKeyed(t *testing.T, s *Server, secret, key, channel string, inputs map[string]string) (int, string, string) {
	t.Helper()
	h := http.Header{}
	switch key {
	case "":
	case emptyKey:
		h["Idempotency-Key"] = []string{""}
	default:
		h.Set("Idempotency-Key", key)
	}
	w := postWith(t, s, secret, "/v1/runs", map[string]any{"workflow": "sized", "channel": channel, "inputs": inputs}, h)
	var out struct {
		InputID string `json:"input_id"`
		Run     *Run   `json:"run"`
	}
	if w.Code < 300 {
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatalf("decode %s: %v", w.Body, err)
		}
	}
	return w.Code, out.InputID, w.Body.String()
}

// TestStartWithIdempotencyKeyStartsOnce: a start sent again with its
// Idempotency-Key, one after the other or at the same time, is the same input, so
// that one run is started, and each repeat answers as the first did (201 with the
// run); the key is the token's own (another token's same key is another start); a
// key reused for another channel or other inputs is refused with 422, and nothing
// is kept for it; without a key every start is a new input, as before.
func TestStartWithIdempotencyKeyStartsOnce(t *testing.T) {
	b := newOnceBackend()
	s := keyedAPI(t, b)
	const ci, other = "ci-bot-secret-0123456789", "other-secret-0123456789"
	topic := map[string]string{"topic": "meal kits"}

	code, first, body := startKeyed(t, s, ci, "order-7731", "C1", topic)
	if code != http.StatusCreated || !strings.HasPrefix(first, keyedPrefix) || !strings.Contains(body, `"run"`) {
		t.Fatalf("the first start: %d %q %s", code, first, body)
	}
	code, again, body := startKeyed(t, s, ci, "order-7731", "C1", topic)
	if code != http.StatusCreated || again != first || !strings.Contains(body, `"run"`) {
		t.Fatalf("the start sent again: %d %q (want 201 and %q, with the run) %s", code, again, first, body)
	}
	if n := b.submitted(); n != 1 {
		t.Errorf("%d submits for a start and its repeat, want 1: a repeat found kept is not submitted again", n)
	}
	var wg sync.WaitGroup
	codes, ids := make([]int, 4), make([]string, 4)
	for i := range codes {
		wg.Go(func() { codes[i], ids[i], _ = startKeyed(t, s, ci, "order-7732", "C1", topic) })
	}
	wg.Wait()
	for i := range codes {
		if codes[i] != http.StatusCreated || ids[i] != ids[0] || ids[i] == first {
			t.Fatalf("4 starts at once with one key: %v %v; want 201 each, one input", codes, ids)
		}
	}
	if got := len(b.keptIDs()); got != 2 {
		t.Fatalf("%d inputs kept for 2 keys: %v", got, b.keptIDs())
	}

	if code, id, _ := startKeyed(t, s, other, "order-7731", "C1", topic); code != http.StatusCreated || id == first {
		t.Fatalf("another token's same key: %d %q; want 201 and an input other than %q", code, id, first)
	}
	for name, c := range map[string]struct {
		channel string
		inputs  map[string]string
	}{
		"other inputs":  {"C1", map[string]string{"topic": "meal kits", "words": "300"}},
		"another topic": {"C1", map[string]string{"topic": "tea"}},
		"other channel": {"C2", topic},
	} {
		code, _, body := startKeyed(t, s, ci, "order-7731", c.channel, c.inputs)
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, "header.Idempotency-Key") || !strings.Contains(body, "new key") {
			t.Errorf("the key reused for %s: %d %s; want 422 naming the header, asking for a new key", name, code, body)
		}
	}
	if got := len(b.keptIDs()); got != 3 {
		t.Errorf("%d inputs kept after the refused reuses, want 3: %v", got, b.keptIDs())
	}

	_, a, _ := startKeyed(t, s, ci, "", "C1", topic)
	_, z, _ := startKeyed(t, s, ci, "", "C1", topic)
	if a == z || strings.HasPrefix(a, keyedPrefix) {
		t.Errorf("two starts without a key: inputs %q and %q; want two random ones", a, z)
	}
}

// TestStartWithIdempotencyKeyNotTaken: a keyed start the Submitter did not take is
// a refusal (429) when the store holds no input of its key, and 503 when the store
// cannot say; both ask to send it again with the same key. A key that is not
// visible ASCII, or longer than 255, is refused with 422 before anything is
// submitted.
func TestStartWithIdempotencyKeyNotTaken(t *testing.T) {
	b := newOnceBackend()
	b.refuse = true
	s := keyedAPI(t, b)
	const ci = "ci-bot-secret-0123456789"
	topic := map[string]string{"topic": "meal kits"}
	if code, _, body := startKeyed(t, s, ci, "k1", "C1", topic); code != http.StatusTooManyRequests || !strings.Contains(body, "same Idempotency-Key") {
		t.Errorf("a keyed start refused: %d %s; want 429 asking for the same key", code, body)
	}
	b.lookupErr = conversation.ErrUnavailable
	if code, _, body := startKeyed(t, s, ci, "k1", "C1", topic); code != http.StatusServiceUnavailable || !strings.Contains(body, "same Idempotency-Key") {
		t.Errorf("a keyed start not taken, the store down: %d %s; want 503 asking for the same key", code, body)
	}
	b.refuse, b.submits, b.lookupErr = false, 0, nil
	for _, key := range []string{"clé", "a b", strings.Repeat("k", 256), emptyKey} {
		if code, _, body := startKeyed(t, s, ci, key, "C1", topic); code != http.StatusUnprocessableEntity || !strings.Contains(body, "Idempotency-Key") {
			t.Errorf("Idempotency-Key %.20q: %d %s; want 422", key, code, body)
		}
	}
	if b.submits != 0 {
		t.Errorf("%d submits for keys refused, want 0", b.submits)
	}
}

// TestStartWithIdempotencyKeyReusedWhileUnchecked: a key reused for another start
// while the store could not be asked before the submit (the database down: the
// spool takes the repeat, which it does not hold) is refused with 422 once the store
// answers, not answered with the first start's run as this one's; a kept input
// whose payload does not decode matches no start (422, not a 503 to retry for
// ever).
func TestStartWithIdempotencyKeyReusedWhileUnchecked(t *testing.T) {
	b := newOnceBackend()
	s := keyedAPI(t, b)
	const ci = "ci-bot-secret-0123456789"
	if code, _, body := startKeyed(t, s, ci, "k1", "C1", map[string]string{"topic": "tea"}); code != http.StatusCreated {
		t.Fatalf("the first start: %d %s", code, body)
	}
	b.spooling, b.lookupFails = true, 1
	code, _, body := startKeyed(t, s, ci, "k1", "C1", map[string]string{"topic": "coffee"})
	if code != http.StatusUnprocessableEntity || !strings.Contains(body, "header.Idempotency-Key") {
		t.Errorf("the key reused while the store could not be asked: %d %s; want 422", code, body)
	}
	b.spooling = false
	_, id, _ := startKeyed(t, s, ci, "k2", "C1", map[string]string{"topic": "tea"})
	b.undecodable = map[string]bool{id: true}
	if code, _, body := startKeyed(t, s, ci, "k2", "C1", map[string]string{"topic": "tea"}); code != http.StatusUnprocessableEntity {
		t.Errorf("a repeat of an input whose payload does not decode: %d %s; want 422", code, body)
	}
}

// TestStartWithIdempotencyKeyRepeatedWhileSpooled: a repeat of a keyed start that
// waits in this replica's spool (the store was down; it is not in the store yet) is
// taken as the repeat it is (202 while its run is not there), not refused with 429,
// and a reuse of its key for another start is refused with 422; one the spool's
// drain stores between the two looks is found in the store.
func TestStartWithIdempotencyKeyRepeatedWhileSpooled(t *testing.T) {
	b := newOnceBackend()
	s := keyedAPI(t, b)
	const ci = "ci-bot-secret-0123456789"
	topic := map[string]string{"topic": "tea"}
	id := keyedInputID("ci-bot", "k1")
	start := conversation.Input{ID: id, Key: conversation.Key{TeamID: "T1", ChannelID: "C1"}, Kind: conversation.KindCommand,
		Command: &conversation.CommandInput{Source: conversation.SourceAPI, UserID: "api:ci-bot", Line: "start sized", Inputs: topic}}
	b.inSpool = map[string]conversation.Input{id: start}
	if code, got, body := startKeyed(t, s, ci, "k1", "C1", topic); code != http.StatusAccepted || got != id {
		t.Errorf("a repeat of a spooled start: %d %q %s; want 202 with %s", code, got, body, id)
	}
	if code, _, body := startKeyed(t, s, ci, "k1", "C1", map[string]string{"topic": "coffee"}); code != http.StatusUnprocessableEntity {
		t.Errorf("the key of a spooled start reused for another: %d %s; want 422", code, body)
	}
	b.drained = true
	if code, got, body := startKeyed(t, s, ci, "k1", "C1", topic); code != http.StatusCreated || got != id {
		t.Errorf("a repeat of a start the drain stored meanwhile: %d %q %s; want 201 with %s", code, got, body, id)
	}
}
