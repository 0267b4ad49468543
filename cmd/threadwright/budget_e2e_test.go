package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EBudgetRefusal: with BUDGET_TOKENS_PER_USER_DAY 1000, alice's first question
// (1100 tokens, as the model reports them) is answered and her second is refused:
// the model receives no request for it, and she gets an ephemeral notice naming the
// ADMINS and when the budget frees up. bob, in the same channel, is still answered
// (4000 tokens), which brings the channel past BUDGET_TOKENS_PER_CHANNEL_DAY 5000:
// ivan's question is then refused with the channel's notice, in Russian (his
// locale). `threadwright usage` reads the same ledger: tokens, turns and cost per
// person, as a table and as CSV.
func TestE2EBudgetRefusal(t *testing.T) {
	const bob, ivan = "U0BOB", "U0IVAN"
	h := newHarness(t, emulator.Config{})
	h.emu.AddUser(emulator.User{ID: ivan, Name: "ivan", Locale: "ru-RU"})
	h.env["BUDGET_TOKENS_PER_USER_DAY"], h.env["BUDGET_TOKENS_PER_CHANNEL_DAY"] = "1000", "5000"
	h.env["ADMINS"] = "U0ADMIN1,U0ADMIN2"
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		switch q := r.LastUserMessage(); {
		case strings.Contains(q, "first question"):
			return openaitest.Response{Text: "first answer", Usage: openaitest.Usage{PromptTokens: 900, CompletionTokens: 200}}
		case strings.Contains(q, "bob's question"):
			return openaitest.Response{Text: "bob's answer", Usage: openaitest.Usage{PromptTokens: 3000, CompletionTokens: 1000}}
		}
		return openaitest.Response{Text: "an answer that should not have been asked for"}
	})
	h.start()

	ts := h.post(general, alice, "<@U0BOT> first question", "")
	if got := h.replies(general, ts, 1); got[0].Text != "first answer" {
		t.Fatalf("first reply %q", got[0].Text)
	}
	h.idle() // the turn is saved, its usage with it (the reply is posted before)
	h.post(general, alice, "<@U0BOT> second question", "")
	h.waitFor("alice's budget notice", func() bool { return len(h.emu.Ephemerals(general, alice)) > 0 })
	ts = h.post(general, bob, "<@U0BOT> bob's question", "")
	if got := h.replies(general, ts, 1); got[0].Text != "bob's answer" {
		t.Fatalf("bob's reply %q", got[0].Text)
	}
	h.idle()
	ivanTS := h.post(general, ivan, "<@U0BOT> ivan's question", "")
	h.waitFor("ivan's budget notice", func() bool { return len(h.emu.Ephemerals(general, ivan)) > 0 })
	h.idle()

	for _, r := range h.ai.Requests() {
		if q := r.LastUserMessage(); strings.Contains(q, "second question") || strings.Contains(q, "ivan's question") {
			t.Errorf("the model was asked %q, over a budget", q)
		}
	}
	if n := len(h.ai.Requests()); n != 2 {
		t.Errorf("the model got %d requests; want 2 (alice's first question, bob's)", n)
	}
	notice := h.emu.Ephemerals(general, alice)
	if len(notice) != 1 {
		t.Fatalf("alice got %d notices; want 1", len(notice))
	}
	for _, want := range []string{"your token budget", "1100 of 1000 tokens", "<@U0ADMIN1>, <@U0ADMIN2>", " UTC on 20"} {
		if !strings.Contains(notice[0].Text, want) {
			t.Errorf("alice's notice %q lacks %q", notice[0].Text, want)
		}
	}
	ru := h.emu.Ephemerals(general, ivan)
	if len(ru) != 1 || !strings.Contains(ru[0].Text, "Этот канал израсходовал дневной лимит токенов (5100 из 5000") ||
		!strings.Contains(ru[0].Text, "<@U0ADMIN1>") {
		t.Errorf("ivan's notices %+v; want one, the channel's, in Russian, naming the admins", ru)
	}
	if msgs := h.emu.BotMessages(general, ivanTS); len(msgs) != 0 {
		t.Errorf("the bot answered ivan in the thread: %+v", msgs)
	}
	if n := len(h.emu.Ephemerals(general, bob)); n != 0 {
		t.Errorf("bob got %d notices; want none", n)
	}
	// The two refusals are counted as such, not as answers (docs/operations.md, "Metrics").
	f := h.scrape()
	if v, _ := f.value("threadwright_turns_total", "kind", "user_message", "outcome", "over_budget"); v != 2 {
		t.Errorf("turns refused over budget = %v, want 2", v)
	}
	if v, _ := f.value("threadwright_turns_total", "kind", "user_message", "outcome", "answered"); v != 2 {
		t.Errorf("answered turns = %v, want 2 (alice's first question, bob's)", v)
	}

	// The usage report reads the ledger the turns wrote.
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	if err := os.WriteFile(prices, []byte("gpt-test: {input: 2.5, output: 10}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEL_PRICES", prices)
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"usage", "--by", "user", "--csv"}, &stdout, &stderr); err != nil {
		t.Fatalf("usage --csv: %v\n%s", err, stderr.String())
	}
	out := stdout.String()
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("usage --csv is not CSV: %v\n%s", err, out)
	}
	want := [][]string{
		{"user", "turns", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd"},
		// 3000 × 2.5 / 1e6 + 1000 × 10 / 1e6 = 0.0175; 900 × 2.5 / 1e6 + 200 × 10 / 1e6 = 0.00425.
		{bob, "1", "3000", "1000", "4000", "0.0175"},
		{alice, "1", "900", "200", "1100", "0.0043"},
	}
	if !slices.EqualFunc(rows, want, slices.Equal) {
		t.Errorf("usage --by user --csv = %q; want %q", rows, want)
	}
	t.Setenv("MODEL_PRICES", "")
	out, err = runCLI(t, "usage", "--by", "model", "--since", "1d")
	if err != nil || !strings.Contains(out, "gpt-test") || !strings.Contains(out, "5100") ||
		!strings.Contains(out, `MODEL_PRICES has no price for "gpt-test"`) {
		t.Errorf("usage --by model without prices: %v\n%s", err, out)
	}
}

// TestHealthcheck runs `threadwright healthcheck` against a running threadwright
// (ready: exit 0), against a server whose /readyz says why it is not ready (the
// reason in one line), and against nothing (the address refuses).
func TestHealthcheck(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	_, port, _ := strings.Cut(h.main.Addr(), ":")
	t.Setenv("HTTP_ADDR", "0.0.0.0:"+port) // as in the Docker image: checked on 127.0.0.1
	if out, err := runCLI(t, "healthcheck"); err != nil || strings.TrimSpace(out) != "ready" {
		t.Fatalf("healthcheck of a ready server: %v\n%s", err, out)
	}
	h.stop()
	if out, err := runCLI(t, "healthcheck"); err == nil {
		t.Errorf("healthcheck of a stopped server: no error\n%s", out)
	}

	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		http.Error(w, "not ready: not connected to Slack", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	t.Setenv("HTTP_ADDR", strings.TrimPrefix(srv.URL, "http://"))
	_, err := runCLI(t, "healthcheck")
	if err == nil || !strings.Contains(err.Error(), "not ready: not connected to Slack") || strings.Contains(err.Error(), "\n") {
		t.Errorf("healthcheck of an unready server: %v; want one line with the reason", err)
	}
	t.Setenv("HTTP_ADDR", "")
	if _, err := runCLI(t, "healthcheck"); err == nil || !strings.Contains(err.Error(), "HTTP_ADDR") {
		t.Errorf("healthcheck with HTTP_ADDR empty: %v; want an error naming HTTP_ADDR", err)
	}
}
