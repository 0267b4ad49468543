package main

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/logtest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// slackRecord returns everything the bot sent to Slack: the arguments of every Web
// API call (text, blocks, streamed pieces, ephemeral messages, file comments; the
// emulator keeps them without the token) and the content of every uploaded file.
func slackRecord(emu *emulator.Server) string {
	var b strings.Builder
	for _, c := range emu.Calls("") {
		fmt.Fprintf(&b, "%s %s\n", c.Method, c.Params.Encode())
		for k, vs := range c.Params {
			for _, v := range vs {
				fmt.Fprintf(&b, "%s=%s\n", k, v) // unescaped too
			}
		}
	}
	for _, f := range emu.Files() {
		fmt.Fprintf(&b, "file %s\n%s\n", f.Name, f.Content)
	}
	return b.String()
}

// TestE2ESecretsNeverReachLogsOrSlack runs the bot with recognisable secrets while the
// model endpoint answers errors that echo the API key it was sent (as providers do for
// a wrong key) and an MCP server answers errors that echo its Authorization header.
// No log line and nothing sent to Slack may hold any secret; the errors still say
// what happened, masked.
func TestE2ESecretsNeverReachLogsOrSlack(t *testing.T) {
	const (
		botToken   = "xoxb-e2e-BOTSECRET-1111"
		appToken   = "xapp-e2e-APPSECRET-2222"
		apiKey     = "sk-e2e-APIKEYSECRET-3333"
		profileKey = "sk-e2e-PROFILESECRET-4444"
		mcpToken   = "mcp-e2e-HEADERSECRET-5555"
	)
	secrets := []string{botToken, appToken, apiKey, profileKey, mcpToken}
	h := &blogHarness{
		wfHarness: &wfHarness{harness: newHarness(t, emulator.Config{BotToken: botToken, AppToken: appToken}), model: &cannedModel{}},
		blog:      newBlogModel(),
	}
	logs := &logtest.Buffer{}
	h.logs = logs
	echo := func(auth string) openaitest.Response {
		key := strings.TrimPrefix(auth, "Bearer ")
		return openaitest.Response{Status: http.StatusUnauthorized, ErrorMessage: "Incorrect API key provided: " + key + " (Authorization: " + auth + ")"}
	}
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if strings.Contains(r.LastUserMessage(), "what is my key") {
			return echo(r.Header.Get("Authorization"))
		}
		ma := artifactRE.FindStringSubmatch(systemText(r))
		mi := itemRE.FindStringSubmatch(r.LastUserMessage())
		if ma != nil && ma[1] == "research" && mi != nil && strings.TrimSpace(mi[3]) == "Section 3" {
			return echo(r.Header.Get("Authorization"))
		}
		return h.blog.respond(r)
	})
	mcpServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "invalid token: "+r.Header.Get("Authorization"), http.StatusUnauthorized)
	}))
	t.Cleanup(mcpServer.Close)
	dir := t.TempDir()
	mcpFile := filepath.Join(dir, "mcp.yaml")
	if err := os.WriteFile(mcpFile, []byte("servers:\n  - name: crm\n    url: "+mcpServer.URL+"/mcp\n    headers: {Authorization: \"Bearer ${CRM_TOKEN}\"}\n    timeout: 2s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CRM_TOKEN", mcpToken)
	t.Setenv("SPARE_API_KEY", profileKey)
	h.env["SLACK_BOT_TOKEN"], h.env["SLACK_APP_TOKEN"], h.env["OPENAI_API_KEY"] = botToken, appToken, apiKey
	h.env["MCP_CONFIG"] = mcpFile
	h.env["MODEL_PROFILES"] = writeFile(t, "profiles.yaml", "spare:\n  base_url: "+h.ai.URL()+"\n  model: spare-model\n  api_key: ${SPARE_API_KEY}\n")
	h.start()

	// An assistant turn whose model call fails with the key in the error.
	ts := h.post(general, alice, "<@U0BOT> what is my key?", "")
	h.replies(general, ts, 1)
	// A pipeline item whose every try fails so: its reason is shown in the thread.
	thread := h.toPipeline()
	h.waitFor("the pipeline to report the failed item", func() bool {
		return strings.Contains(h.transcript(thread), "failed after 3 tries")
	})
	tr := h.transcript(thread)
	if !strings.Contains(tr, "Incorrect API key provided: [REDACTED]") {
		t.Errorf("the failure reason lost what it says (want the key masked, not the text dropped):\n%s", tr)
	}
	h.idle()
	h.stop()
	if !strings.Contains(logs.String(), "Incorrect API key provided: [REDACTED]") {
		t.Errorf("the log lacks the provider's error, masked:\n%s", logs.String())
	}
	assertNoSecrets(t, logs.String(), slackRecord(h.emu), secrets)
}

// assertNoSecrets fails t for each log line, and for the record of what went to
// Slack, that holds one of secrets.
func assertNoSecrets(t *testing.T, log, sent string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		for _, line := range strings.Split(log, "\n") {
			if strings.Contains(line, s) {
				t.Errorf("log line holds %s: %s", s, line)
			}
		}
		if strings.Contains(sent, s) {
			t.Errorf("Slack got %s:\n%s", s, sent)
		}
	}
}

// TestE2EProfileKeyNeverReachesLogsOrSlack: an artifact written on a MODEL_PROFILES
// profile whose endpoint answers an error that echoes the profile's key.
func TestE2EProfileKeyNeverReachesLogsOrSlack(t *testing.T) {
	const profileKey = "sk-e2e-PROFILESECRET-6666"
	h := newWorkflowHarness(t)
	logs := &logtest.Buffer{}
	h.logs = logs
	second := openaitest.NewServer()
	t.Cleanup(second.Close)
	second.Handle(func(r openaitest.Request) openaitest.Response {
		return openaitest.Response{Status: http.StatusUnauthorized, ErrorMessage: "Incorrect API key provided: " + strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")}
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memo.yaml"), []byte(profiledYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ENHANCE_API_KEY", profileKey)
	h.env["WORKFLOWS_DIR"] = dir
	h.env["MODEL_PROFILES"] = writeFile(t, "profiles.yaml", "enhance:\n  base_url: "+second.URL()+"\n  model: enhance-model\n  api_key: ${ENHANCE_API_KEY}\n")
	h.start()
	thread := h.startWorkflow(alice, "memo")
	h.click(thread, alice, "Approve", "")
	h.waitFor("the profile's endpoint to be called", func() bool { return len(second.Requests()) > 0 })
	h.idle()
	h.stop()
	if !strings.Contains(logs.String(), "Incorrect API key provided: [REDACTED]") {
		t.Errorf("the log lacks the profile endpoint's error, masked:\n%s", logs.String())
	}
	assertNoSecrets(t, logs.String(), slackRecord(h.emu), []string{profileKey})
}

func TestConfigRedactor(t *testing.T) {
	c := Config{
		StoreConfig:   StoreConfig{DatabaseURL: "postgres://tw:db-pass%2Fword-1@db.internal:5432/tw"},
		SlackBotToken: "xoxb-bot-token-1", SlackAppToken: "xapp-app-token-1", OpenAIAPIKey: "sk-main-key-1",
		SearxngURL:  "https://search:searx-pass-1@searx.internal/",
		BraveAPIKey: "brave-search-key-1", TavilyAPIKey: "tvly-search-key-1",
		WebhookConfig: WebhookConfig{WebhookSecret: "webhook-default-1",
			WebhookURLs: []string{"https://a.example.com/h|webhook-own-a-1", "https://b.example.com/h"}},
	}
	mcpCfg := mcp.Config{Servers: []mcp.ServerConfig{
		{Name: "crm", URL: "https://u:mcp-url-pass-1@crm.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer mcp-header-token-1"}},
		{Name: "files", Command: []string{"mcp-files"}, Env: map[string]string{"FILES_TOKEN": "files-env-token-1"}},
	}}
	profiles := map[string]ModelProfile{"enhance": {Model: "m", APIKey: "sk-profile-key-1"}, "short": {Model: "m", APIKey: "short"}}
	r := c.redactor(mcpCfg, profiles)
	for _, s := range []string{"xoxb-bot-token-1", "xapp-app-token-1", "sk-main-key-1", "db-pass/word-1", "db-pass%2Fword-1",
		"searx-pass-1", "mcp-url-pass-1", "Bearer mcp-header-token-1", "mcp-header-token-1", "files-env-token-1", "sk-profile-key-1",
		"brave-search-key-1", "tvly-search-key-1", "webhook-default-1", "webhook-own-a-1"} {
		if got := r.String("x " + s + " y"); got != "x [REDACTED] y" {
			t.Errorf("%q scrubbed to %q", s, got)
		}
	}
	if got := r.String("short Bearer db.internal tw"); got != "short Bearer db.internal tw" {
		t.Errorf("short values and non-secrets were scrubbed: %q", got)
	}
}

// TestE2EReadyzHidesTheStoreError cuts the database off: /readyz answers 503 with a
// fixed reason, and the driver's error, which names the database's address, goes to
// the log only.
func TestE2EReadyzHidesTheStoreError(t *testing.T) {
	dsn := storetest.PostgresDSN(t)
	host := dsnHost(t, dsn)
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	proxy := toxiproxy.NewProxy(server, "postgres", "127.0.0.1:0", host)
	if err := proxy.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxy.Stop)
	h := newHarness(t, emulator.Config{})
	logs := &logtest.Buffer{}
	h.logs = logs
	h.env["DATABASE_URL"] = strings.Replace(dsn, host, proxy.Listen, 1)
	h.start()
	readyz := func() (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + h.main.Addr() + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := readyz(); code != http.StatusOK {
		t.Fatalf("/readyz = %d %q before the cut", code, body)
	}
	proxy.Stop()
	code, body := readyz()
	if code != http.StatusServiceUnavailable || body != "not ready: store unavailable\n" {
		t.Errorf("/readyz = %d %q; want 503 %q", code, body, "not ready: store unavailable\n")
	}
	_, port, _ := net.SplitHostPort(proxy.Listen)
	if !strings.Contains(logs.String(), `msg="not ready" reason="store unavailable" error=`) || !strings.Contains(logs.String(), port) {
		t.Errorf("the log lacks the store's error (naming port %s):\n%s", port, logs.String())
	}
	if err := proxy.Start(); err != nil { // for the shutdown's final writes
		t.Fatal(err)
	}
}
