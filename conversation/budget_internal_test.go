package conversation

import (
	"strings"
	"testing"
	"time"
)

func TestOverBudgetAt(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	rows := []UsageRecord{
		{PromptTokens: 400, CompletionTokens: 100, At: t0},                   // 500
		{PromptTokens: 300, At: t0.Add(time.Hour)},                           // 800
		{PromptTokens: 150, CompletionTokens: 50, At: t0.Add(2 * time.Hour)}, // 1000
	}
	for _, tc := range []struct {
		name   string
		budget int64
		// want is nil when under budget, else when it frees up.
		want *time.Time
	}{
		{"Under", 1001, nil},
		{"AtTheBudget", 1000, ptr(t0.Add(BudgetWindow))},           // the first row's leaving is enough
		{"WellPast", 150, ptr(t0.Add(2*time.Hour + BudgetWindow))}, // only the last row's leaving is
		{"TwoRowsMustLeave", 400, ptr(t0.Add(time.Hour + BudgetWindow))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := overBudgetAt(rows, tc.budget, false)
			switch {
			case tc.want == nil && b != nil:
				t.Errorf("refused under the budget: %+v", b)
			case tc.want != nil && b == nil:
				t.Errorf("not refused at %d of %d", 1000, tc.budget)
			case tc.want != nil && (!b.freeAt.Equal(*tc.want) || b.used != 1000 || b.budget != tc.budget):
				t.Errorf("refusal %+v; want used 1000, frees at %v", b, *tc.want)
			}
		})
	}
	if b := overBudgetAt(nil, 1, true); b != nil {
		t.Errorf("refused with no usage: %+v", b)
	}
}

func ptr[T any](v T) *T { return &v }

func TestBudgetText(t *testing.T) {
	b := &budgetRefusal{used: 1200, budget: 1000, freeAt: time.Date(2026, 11, 26, 9, 30, 0, 0, time.UTC)}
	en := budgetText("en", b, []string{"U1", "U2"})
	for _, want := range []string{"your token budget", "1200 of 1000", "It frees up at 09:30 UTC on 2026-11-26.", "<@U1>, <@U2>"} {
		if !strings.Contains(en, want) {
			t.Errorf("%q lacks %q", en, want)
		}
	}
	if got := budgetText("en", b, nil); !strings.Contains(got, "your workspace admins") {
		t.Errorf("without ADMINS: %q", got)
	}
	b.channel = true
	ru := budgetText("ru", b, nil)
	if !strings.Contains(ru, "Этот канал израсходовал дневной лимит токенов (1200 из 1000") || !strings.Contains(ru, "администраторам") ||
		!strings.Contains(ru, "Лимит освободится 2026-11-26 в 09:30 UTC.") {
		t.Errorf("Russian channel notice %q", ru)
	}
}
