package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/metrics"
)

// TestDashboardNamesRealMetrics checks that docs/grafana-dashboard.json is valid JSON
// and that every threadwright_ metric its queries use exists.
func TestDashboardNamesRealMetrics(t *testing.T) {
	raw, err := os.ReadFile("../docs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	m := metrics.New(metrics.Options{})
	// Touch every instrument, so that each has a series to gather.
	m.EnvelopeReceived("events_api")
	m.EnvelopeAcked("events_api", time.Millisecond)
	m.SocketReconnected()
	m.TurnQueued(0)
	m.TurnStarted("user_message", 0)
	m.TurnEnded("user_message", "answered", time.Second)
	m.ModelCall("gpt", "ok", time.Second, 1, 1, 1)
	m.PipelineItem("w", "done")
	m.WorkflowTransition("w", "started")
	metrics.ObserveStore(m, "save", nil, time.Millisecond)
	metrics.ObserveSlack(m, "chat.postMessage", "ok", time.Millisecond)
	m.ToolCall("t", "ok", time.Millisecond)
	fams, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, f := range fams {
		have[f.GetName()] = true
	}
	name := regexp.MustCompile(`threadwright_[a-z_]+`)
	queries := 0
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			queries++
			for _, n := range name.FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(n, "_bucket"), "_count"), "_sum")
				if !have[base] {
					t.Errorf("panel %q: %s is not a metric", p.Title, n)
				}
			}
		}
	}
	if queries == 0 {
		t.Error("the dashboard has no queries")
	}
}
