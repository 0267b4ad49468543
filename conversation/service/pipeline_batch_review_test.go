package service_test

import (
	"context"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// editCountingAgent is a sourcesAgent that counts the research items' editor passes
// by item title; the pass of item hang never returns (until ctx ends), reported on
// hung when it starts.
type editCountingAgent struct {
	*sourcesAgent
	hang string
	hung chan string

	emu   sync.Mutex
	edits map[string]int
}

func (a *editCountingAgent) Revise(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if r.Item != nil && r.Artifact.ID == "research" {
		a.emu.Lock()
		a.edits[r.Item.Title]++
		a.emu.Unlock()
		if r.Item.Title == a.hang {
			a.hung <- r.Item.Title
			<-ctx.Done()
			return "", conversation.Usage{}, ctx.Err()
		}
	}
	return a.sourcesAgent.Revise(ctx, r)
}

func (a *editCountingAgent) edited(title string) int {
	a.emu.Lock()
	defer a.emu.Unlock()
	return a.edits[title]
}

// editHarness is sourcesHarness with an editCountingAgent.
func editHarness(t *testing.T, st conversation.Store, a *editCountingAgent) *wfHarness {
	t.Helper()
	def, err := workflow.Parse("custom.yaml", []byte(batchYAML))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	h := &wfHarness{t: t, st: st, msgr: newMessenger(), agent: &a.scriptedAgent, sum: &foldSummarizer{}}
	h.msgr.updates = true
	h.svc = newService(t, service.Config{Store: st, Messenger: h.msgr, Executor: &echo{}, Workflows: set, Agent: a, PipelineConcurrency: 4})
	return h
}

// TestPipelineBatchCheckpointsEachEditedItem: the items a batch wrote are checkpointed
// as each one's editor pass ends, as an item written alone is: a crash while the
// batch's last item is being edited neither writes the finished items again (the
// batch runs again for the last one only) nor edits them again.
func TestPipelineBatchCheckpointsEachEditedItem(t *testing.T) {
	st := openStore(t, t.TempDir())
	a := &editCountingAgent{sourcesAgent: newSourcesAgent(), hang: "Delta", hung: make(chan string, 1), edits: map[string]int{}}
	h := editHarness(t, st, a)
	h.say("U1", "start batch")
	approve := conversation.Action{Name: conversation.ActionApprove, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: "outline", Rev: h.artifact("outline").Rev}
	if ok, err := h.svc.Submit(context.Background(), conversation.Input{ID: "int:approve", Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: approve, UserID: "U1"}}); err != nil || !ok {
		t.Fatal(ok, err)
	}
	<-a.hung // Delta's editor pass: the other items are edited
	waitFor(t, h, func(ws *workflow.State) bool {
		return workflow.PendingItems(ws.Artifacts["research"].Items) == 1
	})
	h.kill()

	a2 := &editCountingAgent{sourcesAgent: newSourcesAgent(), edits: map[string]int{}}
	h2 := editHarness(t, st, a2)
	h2.wait()
	// The batch, cut by the shutdown, runs again for the item it did not finish.
	for _, b := range a2.batches {
		if len(b.Batch) != 1 || b.Batch[0].Title != "Delta" {
			t.Errorf("batch after the restart covers %+v; want Delta only", b.Batch)
		}
	}
	if n := a2.count("write research"); n != 0 {
		t.Errorf("%d items written alone after the restart; want none", n)
	}
	for _, title := range []string{"Alpha", "Beta", "Gamma"} {
		if n := a2.edited(title); n != 0 {
			t.Errorf("%s, finished before the crash, edited %d times after the restart", title, n)
		}
	}
	if n := a2.edited("Delta"); n != 1 {
		t.Errorf("Delta edited %d times after the restart; want 1", n)
	}
	r := h2.artifact("research")
	if r.Status != workflow.StatusApproved || r.Items[0].Text != "batch notes on Alpha [revised: tighten]" {
		t.Errorf("research = %s %+v", r.Status, r.Items)
	}
}
