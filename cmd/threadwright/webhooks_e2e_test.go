package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/logtest"
	"github.com/threadwright/threadwright/webhook"
)

// receiver is a webhook endpoint: it checks each request's signature, records the
// events it accepted in order, and answers 503 while down.
type receiver struct {
	t      *testing.T
	secret string
	srv    *httptest.Server

	mu       sync.Mutex
	down     bool
	dropNext bool     // record the next event, then answer 503 as if the answer were lost
	got      []recvd  // accepted (and dropped) events, in arrival order
	refused  int      // requests answered 503 while down
	bad      []string // problems with requests
}

// recvd is one event as received.
type recvd struct {
	ID, Type, Artifact, Status, Workflow, Channel, ThreadTS, Actor, Permalink string
}

func newReceiver(t *testing.T, secret string) *receiver {
	r := &receiver{t: t, secret: secret}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := webhook.Verify(r.secret, req.Header, body, time.Now(), 5*time.Minute); err != nil {
		r.bad = append(r.bad, fmt.Sprintf("verify: %v", err))
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	if r.down {
		r.refused++
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	var e struct {
		ID   string `json:"id"`
		Type string `json:"type"`
		Time string `json:"time"`
		Run  struct {
			Workflow, Channel, Permalink string
			ThreadTS                     string `json:"thread_ts"`
		} `json:"run"`
		Artifact *struct {
			ID       string `json:"id"`
			Revision int    `json:"revision"`
			Status   string `json:"status"`
		} `json:"artifact"`
		Actor *struct {
			UserID string `json:"user_id"`
		} `json:"actor"`
	}
	if err := json.Unmarshal(body, &e); err != nil || !strings.HasPrefix(e.ID, "evt_") || e.Time == "" ||
		req.Header.Get(webhook.HeaderEventID) != e.ID || req.Header.Get("Content-Type") != "application/json" {
		r.bad = append(r.bad, fmt.Sprintf("body %s (%v), headers %v", body, err, req.Header))
	}
	got := recvd{ID: e.ID, Type: e.Type, Workflow: e.Run.Workflow, Channel: e.Run.Channel, ThreadTS: e.Run.ThreadTS, Permalink: e.Run.Permalink}
	if e.Artifact != nil {
		got.Artifact, got.Status = e.Artifact.ID, e.Artifact.Status
	}
	if e.Actor != nil {
		got.Actor = e.Actor.UserID
	}
	r.got = append(r.got, got)
	if r.dropNext {
		r.dropNext = false
		http.Error(w, "lost", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// snapshot returns the events received so far, the 503s while down, and problems.
func (r *receiver) snapshot() ([]recvd, int, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recvd(nil), r.got...), r.refused, append([]string(nil), r.bad...)
}

func (r *receiver) set(down, dropNext bool) {
	r.mu.Lock()
	r.down, r.dropNext = down, dropNext
	r.mu.Unlock()
}

// dedup returns events without the repeats of an id, and how many repeats there were.
func dedup(events []recvd) ([]recvd, int) {
	seen := map[string]bool{}
	var out []recvd
	for _, e := range events {
		if !seen[e.ID] {
			seen[e.ID] = true
			out = append(out, e)
		}
	}
	return out, len(events) - len(out)
}

func (h *harness) webhookEnv(url, secret string) {
	h.env["WEBHOOK_URLS"], h.env["WEBHOOK_SECRET"] = url, secret
	h.env["WEBHOOK_POLL"], h.env["WEBHOOK_MIN_BACKOFF"], h.env["WEBHOOK_MAX_BACKOFF"] = "20ms", "20ms", "100ms"
}

// TestE2EWebhooks runs a product brief while the receiver is down (503), stops the
// bot, brings the receiver up and starts the bot again on the same store, and drives
// the run to its end: every event arrives, signed, in the order the run made them,
// the ones made before the restart included; an event whose answer was lost comes
// again with the same id.
func TestE2EWebhooks(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testWebhooks(t, "") })
	t.Run("Postgres", func(t *testing.T) { testWebhooks(t, storetest.PostgresDSN(t)) })
}

func testWebhooks(t *testing.T, databaseURL string) {
	const secret = "whsec-e2e-0123456789"
	recv := newReceiver(t, secret)
	h := newWorkflowHarness(t)
	h.env["DATABASE_URL"] = databaseURL
	h.webhookEnv(recv.srv.URL, secret)
	h.env["WEBHOOK_ALLOW_HOSTS"] = "127.0.0.1"
	recv.set(true, false)
	h.start()
	thread := h.startWorkflow(alice, "product-brief")
	h.click(thread, alice, "B: Direction B", "")
	h.click(thread, alice, "Approve", "")
	h.latest(thread, "A: Direction A", "") // audience's options: problem's events are saved
	h.waitFor("the receiver to refuse a delivery", func() bool { _, refused, _ := recv.snapshot(); return refused >= 2 })
	h.stop()
	if got, _, _ := recv.snapshot(); len(got) != 0 {
		t.Fatalf("events accepted while the receiver was down: %v", got)
	}

	recv.set(false, true)
	h.start()
	h.waitFor("the events saved before the restart", func() bool {
		got, _ := dedup(first(recv))
		return len(got) >= 3
	})
	h.driveToEnd(thread)
	h.file("product-brief.md")
	h.waitFor("run.completed", func() bool {
		got, _ := dedup(first(recv))
		return len(got) > 0 && got[len(got)-1].Type == "run.completed"
	})
	all, _, bad := recv.snapshot()
	if len(bad) > 0 {
		t.Fatalf("bad requests: %v", bad)
	}
	got, repeats := dedup(all)
	if repeats != 1 || all[0].ID != all[1].ID {
		t.Errorf("the event whose answer was lost came %d more times (want 1, at once): %v", repeats, all[:2])
	}
	var types []string
	for _, e := range got {
		types = append(types, strings.TrimSpace(e.Type+" "+e.Artifact))
		if e.Workflow != "product-brief" || e.Channel != general || e.ThreadTS != thread {
			t.Errorf("event %+v: want run product-brief in %s/%s", e, general, thread)
		}
		if strings.HasPrefix(e.Type, "artifact.") && e.Actor != alice {
			t.Errorf("event %+v: want actor %s", e, alice)
		}
	}
	want := []string{"run.started",
		"artifact.generated problem", "artifact.approved problem",
		"artifact.generated audience", "artifact.approved audience",
		"artifact.generated value_proposition", "artifact.approved value_proposition",
		"artifact.generated positioning", "artifact.approved positioning",
		"artifact.generated name", "artifact.approved name",
		"run.completed"}
	if strings.Join(types, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(types, "\n"), strings.Join(want, "\n"))
	}
}

// first returns what recv received.
func first(recv *receiver) []recvd { got, _, _ := recv.snapshot(); return got }

// TestE2EWebhookRefusesLoopback: a webhook URL on a loopback address is not reached
// unless its host is in WEBHOOK_ALLOW_HOSTS; the refusal is logged, as fetch_url's.
func TestE2EWebhookRefusesLoopback(t *testing.T) {
	const secret = "whsec-e2e-0123456789"
	recv := newReceiver(t, secret)
	h := newWorkflowHarness(t)
	h.webhookEnv(recv.srv.URL, secret)
	logs := &logtest.Buffer{}
	h.logs = logs
	h.start()
	h.startWorkflow(alice, "product-brief")
	h.waitFor("the refusal in the log", func() bool { return strings.Contains(logs.String(), "loopback addresses are not allowed") })
	if got, refused, _ := recv.snapshot(); len(got) != 0 || refused != 0 {
		t.Fatalf("the loopback receiver was reached: %v", got)
	}
}
