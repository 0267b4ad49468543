package turns

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestUsageRecordsByModel: a run's UsageMeter, fed concurrently as agents.Client
// does, gives one ledger row per model, the main model's first and counting the
// turn; without any metered call (playground/demo) the turn's usage is one row under the
// main model; Take starts over.
func TestUsageRecordsByModel(t *testing.T) {
	r := &Run{In: conversation.Input{Kind: conversation.KindUserMessage, Message: &conversation.UserMessage{UserID: "U1"}}, meter: &conversation.UsageMeter{},
		env: &env{cfg: Config{Model: "gpt-main"}}}
	ctx := conversation.WithUsageMeter(context.Background(), r.meter)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			model := "gpt-small"
			if i%2 == 0 {
				model = "gpt-main"
			}
			conversation.UsageMeterFrom(ctx).Add(model, conversation.Usage{PromptTokens: 10, CompletionTokens: 1})
		})
	}
	wg.Wait()
	conversation.UsageMeterFrom(ctx).Add("gpt-profile", conversation.Usage{}) // no tokens: no row
	byModel, metered := r.meter.Take()
	st := conversation.State{Workflow: &workflow.State{Name: "blog"}}
	got := r.usageRecords(st, conversation.Usage{PromptTokens: 1, CompletionTokens: 1}, byModel, metered, 1)
	want := []conversation.UsageRecord{
		{UserID: "U1", Workflow: "blog", Model: "gpt-main", Turns: 1, PromptTokens: 50, CompletionTokens: 5},
		{UserID: "U1", Workflow: "blog", Model: "gpt-small", Turns: 0, PromptTokens: 50, CompletionTokens: 5},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("usageRecords = %+v; want %+v", got, want)
	}
	if again, metered := r.meter.Take(); len(again) != 0 || !metered {
		t.Errorf("second Take = %+v, %v; want nothing, metered", again, metered)
	}

	// Only the small model called: its row counts the turn.
	got = r.usageRecords(conversation.State{}, conversation.Usage{}, []conversation.ModelUsage{{Model: "gpt-small", Usage: conversation.Usage{PromptTokens: 3}}}, true, 1)
	if len(got) != 1 || got[0].Model != "gpt-small" || got[0].Turns != 1 {
		t.Errorf("small model only: %+v", got)
	}

	// No metered call (a model outside agents.Client): the turn's usage, main model.
	var none *conversation.UsageMeter
	none.Add("x", conversation.Usage{PromptTokens: 1}) // a nil meter ignores Add
	byModel, metered = none.Take()
	got = r.usageRecords(conversation.State{}, conversation.Usage{PromptTokens: 7, CompletionTokens: 2}, byModel, metered, 1)
	if want := []conversation.UsageRecord{{UserID: "U1", Model: "gpt-main", Turns: 1, PromptTokens: 7, CompletionTokens: 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("unmetered = %+v; want %+v", got, want)
	}
	if got := r.usageRecords(conversation.State{}, conversation.Usage{}, nil, false, 1); len(got) != 0 {
		t.Errorf("no tokens: %+v; want no row", got)
	}
}
