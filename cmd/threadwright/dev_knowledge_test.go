package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kelseyhightower/envconfig"
)

// TestDevKnowledgeAnswerOffline: `threadwright ingest --dev` fills the playground's
// store, not the bot's; `threadwright dev` with the offline demo model then answers a
// question from it, through the emulated Slack, ending with the cited document and
// heading.
func TestDevKnowledgeAnswerOffline(t *testing.T) {
	dataDir := ingestEnv(t, map[string]string{
		"handbook/leave.md": "# Leave\n\n## Parental leave\n\nEmployees get 16 weeks of paid parental leave.\n",
	})
	out, err := ingestCmd(t, "--dev", "handbook")
	if err != nil {
		t.Fatalf("ingest --dev: %v\n%s", err, out)
	}
	if out, _ := ingestCmd(t, "--dev", "--list"); !strings.Contains(out, "handbook/leave.md") {
		t.Fatalf("ingest --dev --list:\n%s", out)
	}
	if out, _ := ingestCmd(t, "--list"); !strings.Contains(out, "no sources ingested") {
		t.Fatalf("ingest --list (the bot's store) after ingest --dev:\n%s", out)
	}

	url, printed := startDev(t, map[string]string{"DATA_DIR": dataDir, "DEMO_LATENCY": "1ms"})
	if !strings.Contains(printed.String(), "the demo model waits 1ms before each answer (DEMO_LATENCY)") {
		t.Errorf("threadwright dev did not say DEMO_LATENCY:\n%s", printed.String())
	}
	client := sessionClient(t)
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	post := `{"channel":"C0GENERAL","user":"U0ALICE","text":"@threadwright how long is parental leave?"}`
	if status := postStatus(t, client, url+"ui/post", post); status != http.StatusOK {
		t.Fatalf("post: status %d", status)
	}
	// The streamed answer (Markdown) ends with its sources.
	want := []string{"From the knowledge base: Employees get 16 weeks of paid parental leave. [1]", `**Sources**  \n[1] handbook/leave.md — Parental leave`}
	if state, ok := waitPlaygroundState(t, client, url, func(state string) bool {
		return strings.Contains(state, want[0]) && strings.Contains(state, want[1])
	}); !ok {
		t.Fatalf("no cited knowledge answer in the playground; want %q; state:\n%s", want, state)
	}
}

// waitPlaygroundState reads the playground's state (GET /ui/state) until cond holds,
// again after each change the page's event stream (GET /ui/events) reports, for at
// most 15 s. It returns the last state read and whether cond held.
func waitPlaygroundState(t *testing.T, client *http.Client, url string, cond func(state string) bool) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"ui/events", nil)
	if err != nil {
		t.Fatal(err)
	}
	events, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer events.Body.Close()
	lines := bufio.NewScanner(events.Body)
	for lines.Scan() { // subscribed once the stream says so
		if lines.Text() == ": connected" {
			break
		}
	}
	state := ""
	for {
		resp, err := client.Get(url + "ui/state")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if state = string(body); cond(state) {
			return state, true
		}
		for { // the next change
			if !lines.Scan() {
				return state, false // the deadline, or the stream ended
			}
			if strings.HasPrefix(lines.Text(), "data:") {
				break
			}
		}
	}
}

// TestDemoLatencySetting: DEMO_LATENCY is read into the demo model's delay; a
// negative or malformed value stops threadwright dev with the setting's name.
func TestDemoLatencySetting(t *testing.T) {
	t.Setenv("DEMO_LATENCY", "2s")
	var dc DevConfig
	if err := envconfig.Process("", &dc); err != nil {
		t.Fatal(err)
	}
	m, err := demoModel(dc)
	if err != nil || m.Delay != 2*time.Second {
		t.Fatalf("DEMO_LATENCY=2s: delay %v, %v", m, err)
	}
	for _, bad := range []string{"-1s", "soon"} {
		setEnv(t, map[string]string{"DEMO_LATENCY": bad, "OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "DEV_ADDR": "127.0.0.1:0", "DATA_DIR": t.TempDir()})
		if _, err := runCLI(t, "dev"); err == nil || !strings.HasPrefix(err.Error(), "DEMO_LATENCY") {
			t.Errorf("DEMO_LATENCY=%s: err %v, want one naming the setting", bad, err)
		}
	}
}
