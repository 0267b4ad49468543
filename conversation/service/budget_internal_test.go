package service

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/turns"
)

func TestOverBudgetAt(t *testing.T) {
	t0 := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	rows := []conversation.UsageRecord{
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

// TestBudgetedInputs: past a budget, what asks a model for nothing still acts: a
// Stop click, and the commands that only read or end a workflow (cancel, help, list,
// status), so that a person over budget can still cancel a run whose pipeline goes
// on spending; a question, a start and any other command are held to the budget.
func TestBudgetedInputs(t *testing.T) {
	s := &Service{cfg: Config{Usage: fakeUsage{}, BudgetTokensPerUserDay: 1000}}
	key := conversation.Key{TeamID: "T1", ChannelID: "C1"}
	cmd := func(line string) conversation.Input {
		return conversation.Input{Kind: conversation.KindCommand, Key: key, Command: &conversation.CommandInput{Source: conversation.SourceSlash, UserID: "U1", Line: line}}
	}
	click := func(name conversation.ActionName) conversation.Input {
		return conversation.Input{Kind: conversation.KindAction, Key: key, Action: &conversation.ActionInput{UserID: "U1", Action: conversation.Action{Name: name}}}
	}
	for _, tc := range []struct {
		in   conversation.Input
		want bool
	}{
		{conversation.Input{Kind: conversation.KindUserMessage, Key: key, Message: &conversation.UserMessage{UserID: "U1", Text: "a question", Mentioned: true}}, true},
		{click(conversation.ActionStop), false},
		{click(conversation.ActionApprove), true},
		{cmd("cancel"), false},
		{cmd("cancel https://team.slack.com/archives/C1/p1700000000000100"), false},
		{cmd("status"), false},
		{cmd("help"), false},
		{cmd(""), false}, // help
		{cmd("list"), false},
		{cmd("start blog about cats"), true},
		{cmd("restart intro"), true},
		{cmd("export"), true},
	} {
		r := &turns.Run{In: tc.in}
		if got := s.budgeted(r); got != tc.want {
			what := string(tc.in.Kind)
			if c := tc.in.Command; c != nil {
				what += " " + strconv.Quote(c.Line)
			}
			if a := tc.in.Action; a != nil {
				what += " " + string(a.Action.Name)
			}
			t.Errorf("budgeted(%s) = %v, want %v", what, got, tc.want)
		}
	}
}

// fakeUsage is a UsageStore that is never read (budgeted only asks whether one is set).
type fakeUsage struct{ conversation.UsageStore }
