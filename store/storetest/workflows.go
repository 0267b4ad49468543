package storetest

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// The cases of Run for Workflows, the running workflows of a channel.

// running returns a state whose workflow, name, was started by startedBy and is in
// status.
func running(name, startedBy string, status workflow.RunStatus) conversation.State {
	return conversation.State{
		Mode: conversation.ModeWorkflow, StartedBy: startedBy,
		Workflow: &workflow.State{Name: name, StartedBy: startedBy, Locale: "en", Status: status},
	}
}

// mustWorkflows returns the thread_ts of the running workflows Workflows lists, in its
// order, and checks each ref against the conversation it names.
func mustWorkflows(t testing.TB, s conversation.Store, teamID, channelID, startedBy string, limit int) []string {
	t.Helper()
	refs, err := s.Workflows(context.Background(), teamID, channelID, startedBy, limit)
	if err != nil {
		t.Fatalf("Workflows(%s, %s, %q, %d): %v", teamID, channelID, startedBy, limit, err)
	}
	out := []string{}
	for _, r := range refs {
		out = append(out, r.Key.ThreadTS)
		c := mustLoad(t, s, r.Key, 0).Conversation
		w := c.State.Workflow
		if w == nil || w.Status != workflow.RunRunning {
			t.Errorf("Workflows listed %s, whose workflow is %+v; want a running one", r.Key, w)
			continue
		}
		if r.Key.TeamID != teamID || r.Key.ChannelID != channelID {
			t.Errorf("Workflows(%s, %s) listed %s of another channel", teamID, channelID, r.Key)
		}
		if r.Name != w.Name || r.StartedBy != w.StartedBy || !r.UpdatedAt.Equal(c.UpdatedAt) || r.UpdatedAt.Location() != time.UTC {
			t.Errorf("ref %s = %q by %q, updated %v; want %q by %q, updated %v (UTC)",
				r.Key, r.Name, r.StartedBy, r.UpdatedAt, w.Name, w.StartedBy, c.UpdatedAt)
		}
	}
	return out
}

// testWorkflows checks that Workflows lists a channel's running workflows, and only
// those, as Save leaves them: newest update first, filtered by starter.
func testWorkflows(t *testing.T, s conversation.Store) {
	thread := func(ts string) conversation.Key {
		k := key
		k.ThreadTS = ts
		return k
	}
	versions := map[conversation.Key]int64{}
	save := func(k conversation.Key, state conversation.State) {
		t.Helper()
		saved := mustSave(t, s, conversation.Turn{Key: k, Version: versions[k], State: state, Append: []conversation.Message{user("turn")}})
		versions[k] = saved.Version
		tick()
	}
	if got := mustWorkflows(t, s, key.TeamID, key.ChannelID, "", 10); len(got) != 0 {
		t.Errorf("Workflows of an empty store = %v; want none", got)
	}

	save(thread("1.a"), running("proposal", "U1", workflow.RunRunning))
	save(thread("1.b"), running("retro", "U2", workflow.RunRunning))
	save(thread("1.c"), running("proposal", "U1", workflow.RunCompleted))
	save(thread("1.d"), running("proposal", "U1", workflow.RunCancelled))
	save(thread("1.e"), conversation.State{Mode: conversation.ModeAssistant, StartedBy: "U1"})
	save(thread("1.f"), running("proposal", "U1", workflow.RunRunning))
	// Running workflows of U1 in another channel, and in a channel of the same id in
	// another team.
	save(conversation.Key{TeamID: key.TeamID, ChannelID: "C0002", ThreadTS: "1.g"}, running("proposal", "U1", workflow.RunRunning))
	save(conversation.Key{TeamID: "T0002", ChannelID: key.ChannelID, ThreadTS: "1.h"}, running("proposal", "U1", workflow.RunRunning))

	check := func(when string, startedBy string, want ...string) {
		t.Helper()
		if want == nil {
			want = []string{}
		}
		if got := mustWorkflows(t, s, key.TeamID, key.ChannelID, startedBy, 10); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Workflows(started by %q) = %v; want %v", when, startedBy, got, want)
		}
	}
	check("created", "", "1.f", "1.b", "1.a")
	check("created", "U1", "1.f", "1.a")
	check("created", "U2", "1.b")
	check("created", "U3")
	if got := mustWorkflows(t, s, key.TeamID, "C0002", "", 10); !reflect.DeepEqual(got, []string{"1.g"}) {
		t.Errorf("Workflows of the other channel = %v; want [1.g]", got)
	}
	if got := mustWorkflows(t, s, "T0002", key.ChannelID, "U1", 10); !reflect.DeepEqual(got, []string{"1.h"}) {
		t.Errorf("Workflows of the other team = %v; want [1.h]", got)
	}

	// A turn moves its workflow to the front; a workflow started in an existing
	// conversation, or started again after it ended, joins the list.
	save(thread("1.a"), running("proposal", "U1", workflow.RunRunning))
	check("after a turn of 1.a", "", "1.a", "1.f", "1.b")
	save(thread("1.e"), running("retro", "U2", workflow.RunRunning))
	save(thread("1.c"), running("retro", "U1", workflow.RunRunning))
	check("after starts", "", "1.c", "1.e", "1.a", "1.f", "1.b")
	check("after starts", "U2", "1.e", "1.b")

	// Workflows that complete, are cancelled, or that the state drops leave it.
	save(thread("1.a"), running("proposal", "U1", workflow.RunCompleted))
	save(thread("1.b"), running("retro", "U2", workflow.RunCancelled))
	save(thread("1.c"), conversation.State{Mode: conversation.ModeAssistant, StartedBy: "U1"})
	check("after ends", "", "1.e", "1.f")
	check("after ends", "U1", "1.f")
	check("after ends", "U2", "1.e")
}

// testWorkflowsLimit checks that Workflows returns at most limit workflows, the most
// recently updated.
func testWorkflowsLimit(t *testing.T, s conversation.Store) {
	for i := range 5 {
		mustSave(t, s, conversation.Turn{Key: otherKey(i), State: running("proposal", fmt.Sprintf("U%d", i%2), workflow.RunRunning)})
		tick()
	}
	for _, tc := range []struct {
		startedBy string
		limit     int
		want      []string
	}{
		{"", 10, []string{otherKey(4).ThreadTS, otherKey(3).ThreadTS, otherKey(2).ThreadTS, otherKey(1).ThreadTS, otherKey(0).ThreadTS}},
		{"", 2, []string{otherKey(4).ThreadTS, otherKey(3).ThreadTS}},
		{"", 1, []string{otherKey(4).ThreadTS}},
		{"U1", 1, []string{otherKey(3).ThreadTS}},
		{"U0", 2, []string{otherKey(4).ThreadTS, otherKey(2).ThreadTS}},
		{"", 0, []string{}},
		{"", -1, []string{}},
	} {
		if got := mustWorkflows(t, s, key.TeamID, key.ChannelID, tc.startedBy, tc.limit); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("Workflows(started by %q, limit %d) = %v; want %v", tc.startedBy, tc.limit, got, tc.want)
		}
	}
}
