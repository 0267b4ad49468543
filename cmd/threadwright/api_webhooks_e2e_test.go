package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/store/storetest"
)

// TestE2EAPIWebhooks drives a run through the HTTP API and Slack together with
// webhooks on: started by the API, its first artifact picked and approved by clicks
// in Slack, the next picked and approved by the API, the rest by clicks, then the
// report. The
// receiver gets every event, signed and in order, for the run the API started, and
// names the API token (api:ci-bot) as the actor of what the token did and the
// person as the actor of what they clicked.
func TestE2EAPIWebhooks(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testAPIWebhooks(t, "") })
	t.Run("Postgres", func(t *testing.T) { testAPIWebhooks(t, storetest.PostgresDSN(t)) })
}

func testAPIWebhooks(t *testing.T, databaseURL string) {
	const secret = "whsec-e2e-0123456789"
	recv := newReceiver(t, secret)
	h := newWorkflowHarness(t)
	h.env["DATABASE_URL"] = databaseURL
	h.webhookEnv(recv.srv.URL, secret)
	h.env["WEBHOOK_ALLOW_HOSTS"] = "127.0.0.1"
	h.env["API_ADDR"] = "127.0.0.1:0"
	h.env["API_TOKENS"] = "ci-bot:" + ciSecret + ";scope=admin"
	h.env["APPROVER_USER_IDS"] = alice + ",api:ci-bot"
	h.start()
	c := apiClient{t: t, base: "http://" + h.main.APIAddr()}

	var started struct {
		Run *api.Run `json:"run"`
	}
	c.expect(http.StatusCreated, "POST", "/v1/runs", ciSecret,
		map[string]any{"workflow": "product-brief", "channel": general, "inputs": map[string]string{"topic": "meal kits for students"}}, &started)
	run := started.Run
	if run == nil {
		t.Fatal("no run")
	}
	thread := run.ThreadTS
	h.idle()
	h.click(thread, alice, "B: Direction B", "")
	h.click(thread, alice, "Approve", "")
	r := apiRun{c: c, secret: ciSecret, id: run.ID}
	r.act("pick", "audience", map[string]any{"option": "A"})
	r.act("approve", "audience", nil)
	h.driveToEnd(thread)
	h.file("product-brief.md")
	var report struct {
		Markdown string
		Draft    bool
	}
	c.expect(http.StatusOK, "GET", "/v1/runs/"+run.ID+"/report", ciSecret, nil, &report)
	if report.Draft {
		t.Errorf("the report of the completed run is a draft")
	}
	h.waitFor("run.completed", func() bool {
		got, _ := dedup(first(recv))
		return len(got) > 0 && got[len(got)-1].Type == "run.completed"
	})
	all, _, bad := recv.snapshot()
	if len(bad) > 0 {
		t.Fatalf("bad requests: %v", bad)
	}
	events, _ := dedup(all)
	var lines []string
	for _, e := range events {
		if e.Workflow != "product-brief" || e.Channel != general || e.ThreadTS != thread {
			t.Errorf("event %+v: want run product-brief in %s/%s", e, general, thread)
		}
		if e.Permalink != run.Permalink {
			t.Errorf("event %s %s: permalink %q, want the run's %q", e.Type, e.Artifact, e.Permalink, run.Permalink)
		}
		lines = append(lines, strings.TrimSpace(e.Type+" "+e.Artifact)+" by "+e.Actor)
	}
	want := []string{"run.started by api:ci-bot",
		"artifact.generated problem by " + alice, "artifact.approved problem by " + alice,
		"artifact.generated audience by api:ci-bot", "artifact.approved audience by api:ci-bot",
		"artifact.generated value_proposition by " + alice, "artifact.approved value_proposition by " + alice,
		"artifact.generated positioning by " + alice, "artifact.approved positioning by " + alice,
		"artifact.generated name by " + alice, "artifact.approved name by " + alice,
		"run.completed by " + alice}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}
