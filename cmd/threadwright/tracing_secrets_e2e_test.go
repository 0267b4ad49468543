package main

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/logtest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2ETracingSecretsNotLogged runs the program with an OTLP endpoint that carries
// credentials in its user information and query, and an OTEL_EXPORTER_OTLP_HEADERS
// token (issue 25, item 5): the log says tracing is on and where, with every one of
// them [REDACTED], and the failed exports' errors leak none of them either.
func TestE2ETracingSecretsNotLogged(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://otel-user-token:otel-pass-secret@127.0.0.1:1/?api-key=otel-query-secret"
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20otel-header-secret,x-tenant=acme")
	logs := &logtest.Buffer{}
	h.logs = logs
	h.start()
	h.ai.Push(openaitest.Response{Text: "traced"})
	ts := h.post(general, alice, "<@U0BOT> hello", "")
	h.replies(general, ts, 1)
	h.idle()
	h.stop()
	out := logs.String()
	if !strings.Contains(out, "tracing on") || !strings.Contains(out, "127.0.0.1:1") {
		t.Fatalf("no tracing line naming the collector:\n%s", out)
	}
	for _, s := range []string{"otel-user-token", "otel-pass-secret", "otel-query-secret", "otel-header-secret"} {
		if strings.Contains(out, s) {
			t.Errorf("the log holds %q", s)
		}
	}
	if got := h.main.Config.redactor(mcp.Config{}, nil).String("header otel-header-secret"); got != "header [REDACTED]" {
		t.Errorf("the header's token is not in the scrubber")
	}
}
