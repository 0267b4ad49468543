package main

import (
	"net/http"
	"testing"

	"github.com/threadwright/threadwright/api"
)

// TestE2EPassesInTheAPI: the run resource says what the cards say of the model's own
// passes: the outline's options were reviewed, the body was enhanced on its profile.
func TestE2EPassesInTheAPI(t *testing.T) {
	second := secondModel(t)
	h := newPassesHarness(t, "enhance:\n  base_url: "+second.URL()+"\n  model: enhance-model\n")
	h.env["API_ADDR"] = "127.0.0.1:0"
	h.env["API_TOKENS"] = "ci-bot:" + ciSecret + ";scope=admin"
	h.start()
	thread := h.startWorkflow(alice, "launch")
	h.latest(thread, "A: Reviewed A", "")
	c := apiClient{t: t, base: "http://" + h.main.APIAddr()}
	run := func() *api.Run {
		var list struct{ Runs []api.RunSummary }
		c.expect(http.StatusOK, "GET", "/v1/runs?channel="+general, ciSecret, nil, &list)
		if len(list.Runs) != 1 {
			t.Fatalf("runs of %s: %+v", general, list.Runs)
		}
		var got api.Run
		c.expect(http.StatusOK, "GET", "/v1/runs/"+list.Runs[0].ID, ciSecret, nil, &got)
		return &got
	}
	r := run()
	plan := r.Artifacts[0]
	if !plan.Reviewed || plan.Enhancement != "" {
		t.Errorf("the plan's options: reviewed %v, enhancement %q; want reviewed, none", plan.Reviewed, plan.Enhancement)
	}
	h.toBody(thread)
	r = run()
	if body := artifactOf(t, r, "body"); body.Enhancement != "enhanced" || body.Reviewed {
		t.Errorf("the body: enhancement %q, reviewed %v; want enhanced", body.Enhancement, body.Reviewed)
	}
}
