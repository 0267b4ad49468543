package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// TestUsageTable: a report's lines sum each group's models, are priced per model
// (a group with an unpriced model costs "?"), come largest first, align in columns,
// and end with the total and a note naming the unpriced models.
func TestUsageTable(t *testing.T) {
	prices := filepath.Join(t.TempDir(), "prices.json")
	if err := os.WriteFile(prices, []byte(`{"gpt-a": {"input": 1, "output": 2}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := conversation.LoadPrices(prices)
	if err != nil {
		t.Fatal(err)
	}
	lines := usageLines([]conversation.UsageTotal{
		{Group: "C1", Model: "gpt-a", Turns: 2, PromptTokens: 1_000_000, CompletionTokens: 500_000},
		{Group: "C2", Model: "gpt-a", Turns: 1, PromptTokens: 300_000, CompletionTokens: 100_000},
		{Group: "C2", Model: "local", Turns: 5, PromptTokens: 2_000_000, CompletionTokens: 10},
	}, p)
	var out bytes.Buffer
	if err := printUsage(&out, conversation.UsageByChannel, time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), lines); err != nil {
		t.Fatal(err)
	}
	want := `Usage since 2026-11-01T00:00:00Z, by channel

  channel  turns  prompt_tokens  completion_tokens  total_tokens  cost_usd
       C2      6        2300000             100010       2400010         ?
       C1      2        1000000             500000       1500000    2.0000
    total      8        3300000             600010       3900010         ?

Note: MODEL_PRICES has no price for "local"; their cost is shown as "?".
`
	if got := out.String(); got != want {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}

	bad := filepath.Join(t.TempDir(), "bad.yaml")
	for _, text := range []string{"gpt-a: {input: 1, ouput: 2}\n", "gpt-a: {input: -1, output: 2}\n"} {
		if err := os.WriteFile(bad, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := conversation.LoadPrices(bad); err == nil || !strings.HasPrefix(err.Error(), "MODEL_PRICES: ") {
			t.Errorf("conversation.LoadPrices(%q) = %v; want a MODEL_PRICES error", text, err)
		}
	}
}
