package conversation_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// These tests check the workflow's cards as Slack would show them: which messages
// still offer buttons, and what a closed one says superseded it.

// through picks option A of each choice artifact ids, in order, and has approver
// approve it.
func (h *wfHarness) through(approver string, ids ...string) {
	h.t.Helper()
	for _, id := range ids {
		h.click("U1", conversation.ActionPick, id, "A", "")
		h.click(approver, conversation.ActionApprove, id, "", "")
		if st := h.artifact(id); st.Status != workflow.StatusApproved {
			h.t.Fatalf("%s is %s after its approval", id, st.Status)
		}
	}
}

// staleRow reports whether the stale list card has a row for artifact id, that row's
// text, and whether it still offers buttons (the block after it is its actions).
func staleRow(c conversation.Card, id string) (found bool, text string, buttons bool) {
	for i, b := range c.Blocks {
		if b.Kind == conversation.BlockSection && strings.Contains(b.Text, "(`"+id+"`)") {
			next := i + 1
			return true, b.Text, next < len(c.Blocks) && c.Blocks[next].Kind == conversation.BlockActions && len(c.Blocks[next].Buttons) > 0 &&
				c.Blocks[next].Buttons[0].Action.Artifact == id
		}
	}
	return false, "", false
}

// staleList returns the stale list's card as Slack shows it.
func (h *wfHarness) staleList() (string, conversation.Card) {
	h.t.Helper()
	l := h.state().Stale
	if l == nil || l.TS == "" {
		h.t.Fatalf("no stale list shown: %+v", l)
	}
	return l.TS, h.msgr.card(l.TS)
}

// TestWorkflowKeepNeedsAnApprover: keeping a stale artifact approves it, so with
// APPROVER_USER_IDS set another person's Keep (or Keep all) is refused and changes
// nothing (bug 1 of the workflow-core issue: Keep set approved without the check).
func TestWorkflowKeepNeedsAnApprover(t *testing.T) {
	h := newWF(t, "UBOSS")
	h.say("U1", "start product-brief")
	h.through("UBOSS", "problem", "audience", "value_proposition")
	h.say("U1", "edit problem make it sharper")
	h.click("UBOSS", conversation.ActionApprove, "problem", "", "")
	ts, list := h.staleList()
	for _, id := range []string{"audience", "value_proposition"} {
		if found, _, buttons := staleRow(list, id); !found || !buttons {
			t.Fatalf("stale list row %s: found %v, buttons %v", id, found, buttons)
		}
	}
	h.drain()

	h.click("U1", conversation.ActionKeep, "audience", "", "")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "only the approvers (<@UBOSS>)") {
		t.Fatalf("Keep by a non-approver answered %q", got)
	}
	h.clickRev("U1", conversation.ActionKeepAll, "", 0, "problem", "")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "only the approvers (<@UBOSS>)") {
		t.Fatalf("Keep all by a non-approver answered %q", got)
	}
	for _, id := range []string{"audience", "value_proposition"} {
		if st := h.artifact(id).Status; st != workflow.StatusStale {
			t.Fatalf("%s is %s after refused keeps; want stale", id, st)
		}
	}

	h.click("UBOSS", conversation.ActionKeep, "audience", "", "")
	if st := h.artifact("audience").Status; st != workflow.StatusApproved {
		t.Fatalf("the approver's Keep left audience %s", st)
	}
	list = h.msgr.card(ts)
	if _, text, buttons := staleRow(list, "audience"); buttons || !strings.Contains(text, "kept by <@UBOSS>") {
		t.Fatalf("kept row %q still offers buttons: %v", text, buttons)
	}
	if _, _, buttons := staleRow(list, "value_proposition"); !buttons {
		t.Fatal("the row still stale lost its buttons")
	}
	if labels := h.msgr.buttons(ts); strings.Contains(strings.Join(labels, "|"), "Keep all") {
		t.Fatalf("Keep all offered with one row left: %q", labels)
	}
}

// TestWorkflowFailedRestartChangesNothing: when the new options of a restarted
// artifact cannot be drawn, the restart is undone as a whole: statuses, options, what
// went stale and every card's buttons are as before (bug 2).
func TestWorkflowFailedRestartChangesNothing(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	h.through("U1", "problem")
	h.click("U1", conversation.ActionPick, "audience", "A", "")
	review := h.artifact("audience").MessageTS
	before := h.state().Clone()
	h.drain()

	h.agent.fail["options"] = errors.New("the model is down")
	h.say("U1", "restart problem")
	if got := strings.Join(h.drain(), "\n"); got == "" || strings.Contains(got, "depend on an older version") {
		t.Fatalf("a failed restart answered %q", got)
	}
	after := h.state()
	if !reflect.DeepEqual(after.Artifacts, before.Artifacts) || after.Stale != nil {
		t.Fatalf("a failed restart changed the run:\n%+v\nwas\n%+v\nstale %+v", after.Artifacts, before.Artifacts, after.Stale)
	}
	if labels := strings.Join(h.msgr.buttons(review), "|"); !strings.Contains(labels, "Approve") {
		t.Fatalf("audience's review card lost its buttons: %q", labels)
	}

	// Once the model answers again the same restart works.
	delete(h.agent.fail, "options")
	h.say("U1", "restart problem")
	if st := h.artifact("problem").Status; st != workflow.StatusOptionsGenerated {
		t.Fatalf("problem is %s after the restart; want new options", st)
	}
}

// TestWorkflowSupersededCardsAreClosed: after Request changes the earlier review card
// loses Approve and says which revision replaced it, so only one card offers Approve;
// the options card says what was chosen; a click on the old card changes nothing
// (bug 3).
func TestWorkflowSupersededCardsAreClosed(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	optionsTS := h.artifact("problem").MessageTS
	h.click("U1", conversation.ActionPick, "problem", "B", "")
	first := h.artifact("problem")
	if labels := h.msgr.buttons(optionsTS); len(labels) != 0 || !strings.Contains(h.msgr.cardText(optionsTS), "Option B chosen") {
		t.Fatalf("options card after the pick: buttons %q, text %q", labels, h.msgr.cardText(optionsTS))
	}
	h.click("U2", conversation.ActionRequestChanges, "problem", "", "shorter please")
	second := h.artifact("problem")
	if second.MessageTS == first.MessageTS || !strings.Contains(second.Text, "shorter please") {
		t.Fatalf("no new revision shown: %+v", second)
	}
	if labels := h.msgr.buttons(first.MessageTS); len(labels) != 0 {
		t.Fatalf("the superseded review card still offers %q", labels)
	}
	if text := h.msgr.cardText(first.MessageTS); !strings.Contains(text, "Revised ↓") {
		t.Fatalf("the superseded review card says %q", text)
	}
	if labels := strings.Join(h.msgr.buttons(second.MessageTS), "|"); !strings.Contains(labels, "Approve") {
		t.Fatalf("the new review card offers %q", labels)
	}
	h.drain()
	h.clickRev("U1", conversation.ActionApprove, "problem", first.Rev, "", "")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "no longer current") {
		t.Fatalf("a click on the old card answered %q", got)
	}
	if st := h.artifact("problem").Status; st != workflow.StatusGenerated {
		t.Fatalf("a click on the old card made problem %s", st)
	}
}

// TestWorkflowStaleListAfterReapproval: after `restart problem` the dependents are
// stale, but the list that offers Keep comes only once the new problem is approved;
// until then keeping or regenerating them is refused (bug 4). Then Keep, Regenerate
// all and the rows' notes.
func TestWorkflowStaleListAfterReapproval(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	h.through("U1", "problem", "audience", "value_proposition")
	h.drain()
	h.say("U1", "restart problem")
	if got := strings.Join(h.drain(), "\n"); strings.Contains(got, "depend on an older version") {
		t.Fatalf("stale list shown while the new problem is being chosen:\n%s", got)
	}
	for _, id := range []string{"audience", "value_proposition"} {
		if st := h.artifact(id).Status; st != workflow.StatusStale {
			t.Fatalf("%s is %s after the restart; want stale", id, st)
		}
	}
	// A click drawn for the stale artifact (an old card) cannot keep it now.
	h.click("U1", conversation.ActionKeep, "audience", "", "")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "once its new version is approved") {
		t.Fatalf("Keep before the new problem is approved answered %q", got)
	}
	if st := h.artifact("audience").Status; st != workflow.StatusStale {
		t.Fatalf("audience is %s; want stale", st)
	}

	h.through("U1", "problem")
	ts, _ := h.staleList()
	if !strings.Contains(h.msgr.cardText(ts), "depend on an older version") {
		t.Fatalf("stale list %q", h.msgr.cardText(ts))
	}
	if labels := strings.Join(h.msgr.buttons(ts), "|"); !strings.Contains(labels, "Keep all") || !strings.Contains(labels, "Regenerate all") {
		t.Fatalf("two stale rows without Keep all / Regenerate all: %q", labels)
	}
	h.click("U2", conversation.ActionKeep, "audience", "", "")
	h.clickRev("U3", conversation.ActionRegenerateAll, "", 0, "problem", "use the new problem")
	vp := h.artifact("value_proposition")
	if vp.Status != workflow.StatusGenerated || !strings.Contains(vp.Text, "use the new problem") {
		t.Fatalf("value_proposition after Regenerate all: %+v", vp)
	}
	list := h.msgr.card(ts)
	if _, text, buttons := staleRow(list, "audience"); buttons || !strings.Contains(text, "kept by <@U2>") {
		t.Fatalf("audience row %q, buttons %v", text, buttons)
	}
	if _, text, buttons := staleRow(list, "value_proposition"); buttons || !strings.Contains(text, "regenerated by <@U3>") {
		t.Fatalf("value_proposition row %q, buttons %v", text, buttons)
	}
	if labels := h.msgr.buttons(ts); len(labels) != 0 {
		t.Fatalf("the handled stale list still offers %q", labels)
	}
	if h.state().Stale != nil {
		t.Fatalf("a handled stale list is kept: %+v", h.state().Stale)
	}
}

// TestWorkflowKeepAll keeps every stale artifact with one click; the rows say who.
func TestWorkflowKeepAll(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	h.through("U1", "problem", "audience", "value_proposition")
	h.say("U1", "edit problem make it sharper")
	h.click("U1", conversation.ActionApprove, "problem", "", "")
	ts, _ := h.staleList()
	h.clickRev("U2", conversation.ActionKeepAll, "", 0, "problem", "")
	for _, id := range []string{"audience", "value_proposition"} {
		if st := h.artifact(id).Status; st != workflow.StatusApproved {
			t.Fatalf("%s is %s after Keep all", id, st)
		}
		if _, text, buttons := staleRow(h.msgr.card(ts), id); buttons || !strings.Contains(text, "kept by <@U2>") {
			t.Fatalf("row %s %q, buttons %v", id, text, buttons)
		}
	}
	// The run goes on: positioning's options come next.
	if st := h.artifact("positioning").Status; st != workflow.StatusOptionsGenerated {
		t.Fatalf("positioning is %s after Keep all", st)
	}
}
