package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EUsageByModel: with OPENAI_SMALL_MODEL other than OPENAI_MODEL and
// SCOPE_DESCRIPTION set, a question costs a scope check on the small model and an
// answer on the main one; the usage ledger gets a row for each model with that
// model's own tokens, and the turn is counted once (on the main model's row), so
// `usage --by model` and `usage --by user` are both right.
func TestE2EUsageByModel(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["OPENAI_SMALL_MODEL"] = "gpt-small"
	h.env["SCOPE_DESCRIPTION"] = "questions about the ACME billing system"
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if r.Chat.Model == "gpt-small" {
			return openaitest.Response{
				ToolCalls: []openaitest.ToolCall{{Name: "classify_scope", Arguments: `{"in_scope":true,"reason":"billing"}`}},
				Usage:     openaitest.Usage{PromptTokens: 8000, CompletionTokens: 1000},
			}
		}
		return openaitest.Response{Text: "the invoice is paid", Usage: openaitest.Usage{PromptTokens: 1000, CompletionTokens: 200}}
	})
	h.start()
	ts := h.post(general, alice, "<@U0BOT> is the ACME invoice paid?", "")
	if got := h.replies(general, ts, 1); got[0].Text != "the invoice is paid" {
		t.Fatalf("reply %q", got[0].Text)
	}
	h.idle() // the turn is saved, its usage with it
	var small, main int
	for _, r := range h.ai.Requests() {
		switch r.Chat.Model {
		case "gpt-small":
			small++
		case "gpt-test":
			main++
		}
	}
	if small != 1 || main != 1 {
		t.Fatalf("model calls: %d on gpt-small, %d on gpt-test; want one each (the scope check, the answer)", small, main)
	}

	csvOf := func(args ...string) [][]string {
		t.Helper()
		var stdout, stderr bytes.Buffer
		if err := run(context.Background(), append([]string{"usage"}, args...), &stdout, &stderr); err != nil {
			t.Fatalf("usage %v: %v\n%s", args, err, stderr.String())
		}
		rows, err := csv.NewReader(strings.NewReader(stdout.String())).ReadAll()
		if err != nil {
			t.Fatalf("usage %v is not CSV: %v\n%s", args, err, stdout.String())
		}
		return rows
	}
	prices := filepath.Join(t.TempDir(), "prices.yaml")
	if err := os.WriteFile(prices, []byte("gpt-test: {input: 2.5, output: 10}\ngpt-small: {input: 0.15, output: 0.6}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MODEL_PRICES", prices)
	byModel := csvOf("--by", "model", "--csv")
	want := [][]string{
		{"model", "turns", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd"},
		// 8000 × 0.15 / 1e6 + 1000 × 0.6 / 1e6 = 0.0018; 1000 × 2.5 / 1e6 + 200 × 10 / 1e6 = 0.0045.
		{"gpt-small", "0", "8000", "1000", "9000", "0.0018"},
		{"gpt-test", "1", "1000", "200", "1200", "0.0045"},
	}
	if !slices.EqualFunc(byModel, want, slices.Equal) {
		t.Errorf("usage --by model --csv = %q; want %q", byModel, want)
	}
	byUser := csvOf("--by", "user", "--csv")
	wantUser := [][]string{
		{"user", "turns", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd"},
		// One line per person, each model's tokens priced at its own price.
		{alice, "1", "9000", "1200", "10200", "0.0063"},
	}
	if !slices.EqualFunc(byUser, wantUser, slices.Equal) {
		t.Errorf("usage --by user --csv = %q; want %q", byUser, wantUser)
	}
}
