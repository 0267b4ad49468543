package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/store/storetest"
)

// TestE2EAPIStartOnce: a client that sends POST /v1/runs again with its
// Idempotency-Key (after a timeout, say), or sends it three times at once, starts
// one run, on SQLite and on Postgres: one root message in the channel, one run, and
// every answer names it; the key reused for other inputs is refused with 422 and
// posts nothing. Through the real intake and store, so that the repeats at once
// meet in one group commit or in the next.
func TestE2EAPIStartOnce(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testE2EAPIStartOnce(t, "") })
	t.Run("Postgres", func(t *testing.T) { testE2EAPIStartOnce(t, storetest.PostgresDSN(t)) })
}

func testE2EAPIStartOnce(t *testing.T, databaseURL string) {
	h := newWorkflowHarness(t)
	h.env["DATABASE_URL"] = databaseURL
	h.env["API_ADDR"] = "127.0.0.1:0"
	h.env["API_TOKENS"] = "ci-bot:" + ciSecret + ";scope=admin"
	h.start()
	c := apiClient{t: t, base: "http://" + h.main.APIAddr()}
	roots := len(h.emu.BotMessages(general, ""))
	brief := map[string]any{"workflow": "product-brief", "channel": general, "inputs": map[string]string{"topic": "meal kits for students"}}
	type started struct {
		InputID string   `json:"input_id"`
		Run     *api.Run `json:"run"`
	}

	// Sent again, one after the other.
	k1 := c.with("Idempotency-Key", "brief-2026-12-04")
	var first, again started
	k1.expect(http.StatusCreated, "POST", "/v1/runs", ciSecret, brief, &first)
	k1.expect(http.StatusCreated, "POST", "/v1/runs", ciSecret, brief, &again)
	if first.Run == nil || again.Run == nil || again.Run.ID != first.Run.ID || again.InputID != first.InputID {
		t.Fatalf("the start sent again: %+v, then %+v; want one input and one run", first, again)
	}

	// Sent three times at once.
	k2 := c.with("Idempotency-Key", "brief-2026-12-05")
	var wg sync.WaitGroup
	codes, res := make([]int, 3), make([]started, 3)
	for i := range res {
		wg.Go(func() { codes[i], _ = k2.do("POST", "/v1/runs", ciSecret, brief, &res[i]) })
	}
	wg.Wait()
	for i := range res {
		if codes[i] != http.StatusCreated || res[i].Run == nil || res[i].InputID != res[0].InputID || res[i].Run.ID != res[0].Run.ID ||
			res[i].Run.ID == first.Run.ID {
			t.Fatalf("three starts at once with one key: %v %+v; want 201 each, one new run", codes, res)
		}
	}

	// The key reused for another topic.
	other := map[string]any{"workflow": "product-brief", "channel": general, "inputs": map[string]string{"topic": "tea"}}
	k1.expect(http.StatusUnprocessableEntity, "POST", "/v1/runs", ciSecret, other, nil)

	h.idle()
	if got := len(h.emu.BotMessages(general, "")) - roots; got != 2 {
		t.Errorf("%d threads posted in %s for two keys, want 2", got, general)
	}
	var list struct{ Runs []api.RunSummary }
	c.expect(http.StatusOK, "GET", "/v1/runs?channel="+general+"&status=running", ciSecret, nil, &list)
	if len(list.Runs) != 2 {
		t.Errorf("running runs of %s: %+v; want 2", general, list.Runs)
	}
}

// TestE2EAPIStartOnceThroughADatabaseCut: a client starts a run while the database is
// cut off (a proxy between the replica and Postgres); the replica spools the start,
// and the client gives up waiting, as a client does. Once the database is back, the
// client sends the start again with its Idempotency-Key, which is answered 201 with
// the run, the one run of that key (a repeat of a start in the spool waits for its
// run, as the first would). The channel shows one thread for it, and a repeat after
// that answers the same run.
func TestE2EAPIStartOnceThroughADatabaseCut(t *testing.T) {
	c := newCluster(t, storetest.PostgresDSN(t))
	c.cuttable()
	c.ai.Handle((&cannedModel{}).respond)
	c.env["API_ADDR"] = "127.0.0.1:0"
	c.env["API_TOKENS"] = "ci-bot:" + ciSecret + ";scope=admin"
	r := c.startMain("a")
	base := "http://" + r.main.APIAddr()
	roots := len(c.emu.BotMessages(general, ""))
	brief := map[string]any{"workflow": "product-brief", "channel": general, "inputs": map[string]string{"topic": "meal kits for students"}}
	body, err := json.Marshal(brief)
	if err != nil {
		t.Fatal(err)
	}
	start := func(client *http.Client) (int, api.Run, error) {
		req, err := http.NewRequest(http.MethodPost, base+"/v1/runs", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+ciSecret)
		req.Header.Set("Idempotency-Key", "brief-during-the-outage")
		resp, err := client.Do(req)
		if err != nil {
			return 0, api.Run{}, err
		}
		defer resp.Body.Close()
		var out struct{ Run *api.Run }
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if out.Run == nil {
			return resp.StatusCode, api.Run{}, nil
		}
		return resp.StatusCode, *out.Run, nil
	}

	c.cut()
	if code, _, err := start(&http.Client{Timeout: 3 * time.Second}); err == nil {
		t.Fatalf("the start during the outage answered %d within 3 s; want the client to give up waiting", code)
	}
	c.restore()
	// Sent again at once: in the spool or in the database by now, it is a repeat.
	code, run, err := start(http.DefaultClient)
	if err != nil || code != http.StatusCreated {
		t.Fatalf("the start sent again once the database is back: %d (%v); want 201 with its run", code, err)
	}
	if code, again, err := start(http.DefaultClient); err != nil || code != http.StatusCreated || again.ID != run.ID {
		t.Fatalf("a repeat after the outage: %d %+v (%v); want 201 and run %s", code, again, err, run.ID)
	}
	c.settle()
	if got := len(c.emu.BotMessages(general, "")) - roots; got != 1 {
		t.Errorf("%d threads posted in %s for one key, want 1", got, general)
	}
}
