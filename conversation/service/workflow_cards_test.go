package service_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
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
	if found, _, buttons := staleRow(list, "audience"); !found || !buttons {
		t.Fatalf("stale list row audience: found %v, buttons %v", found, buttons)
	}
	// value_proposition depends on audience, stale too: nothing to keep it against yet.
	if found, text, buttons := staleRow(list, "value_proposition"); !found || buttons || !strings.Contains(text, "waits until *Target audience* is approved") {
		t.Fatalf("stale list row value_proposition %q: found %v, buttons %v", text, found, buttons)
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
		t.Fatal("value_proposition's row offers nothing once audience is approved")
	}
	if labels := h.msgr.buttons(ts); strings.Contains(strings.Join(labels, "|"), "Keep all") {
		t.Fatalf("Keep all offered with one row left: %q", labels)
	}
	// The kept artifact's own message says so, without buttons.
	if aud := h.artifact("audience"); !strings.Contains(h.msgr.cardText(aud.MessageTS), "Kept as it is by <@UBOSS>") || len(h.msgr.buttons(aud.MessageTS)) != 0 {
		t.Fatalf("audience's message after Keep: %q, buttons %q", h.msgr.cardText(aud.MessageTS), h.msgr.buttons(aud.MessageTS))
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
	audienceTS := h.artifact("audience").MessageTS
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
	// Each stale artifact's own message says it is out of date, without buttons.
	if text := h.msgr.cardText(audienceTS); !strings.Contains(text, "Out of date: *Problem* changed") || len(h.msgr.buttons(audienceTS)) != 0 {
		t.Fatalf("audience's message after the restart: %q, buttons %q", text, h.msgr.buttons(audienceTS))
	}
	// A click drawn for the stale artifact (an old card) cannot keep it now.
	h.click("U1", conversation.ActionKeep, "audience", "", "")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "depends on *Problem*, which is not approved yet") {
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
	h.click("U2", conversation.ActionKeep, "audience", "", "")
	// Regenerate all: value_proposition, the one row left, is written again.
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

// twinYAML has two drafts written from one intro, independent of each other.
const twinYAML = `
name: twin
title: Twin
artifacts:
  - id: intro
    title: Intro
  - id: left
    title: Left
    depends_on: [intro]
  - id: right
    title: Right
    depends_on: [intro]
report: "{{ artifact \"intro\" }}"
`

// newWFOf is newWF with the workflows of yaml.
func newWFOf(t *testing.T, yaml string, approvers ...string) *wfHarness {
	t.Helper()
	def, err := workflow.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &scriptedAgent{fail: map[string]error{}}, sum: &foldSummarizer{}}
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: set, Agent: h.agent, Approvers: approvers})
	return h
}

// twinChanged runs twin to its end, edits the intro and approves it: left and right
// are listed stale.
func twinChanged(t *testing.T) (*wfHarness, string) {
	h := newWFOf(t, twinYAML)
	h.say("U1", "start twin")
	for _, id := range []string{"intro", "left", "right"} {
		h.click("U1", conversation.ActionApprove, id, "", "")
	}
	if h.state().Status != workflow.RunCompleted {
		t.Fatalf("twin not completed: %+v", h.state().Artifacts)
	}
	h.say("U1", "edit intro make it sharper")
	h.click("U1", conversation.ActionApprove, "intro", "", "")
	ts, _ := h.staleList()
	if labels := strings.Join(h.msgr.buttons(ts), "|"); !strings.Contains(labels, "Keep all") || !strings.Contains(labels, "Regenerate all") {
		t.Fatalf("two stale rows without Keep all / Regenerate all: %q", labels)
	}
	return h, ts
}

// TestWorkflowKeepAll keeps every stale artifact with one click; the rows say who.
func TestWorkflowKeepAll(t *testing.T) {
	h, ts := twinChanged(t)
	h.clickRev("U2", conversation.ActionKeepAll, "", 0, "intro", "")
	for _, id := range []string{"left", "right"} {
		if st := h.artifact(id).Status; st != workflow.StatusApproved {
			t.Fatalf("%s is %s after Keep all", id, st)
		}
		if _, text, buttons := staleRow(h.msgr.card(ts), id); buttons || !strings.Contains(text, "kept by <@U2>") {
			t.Fatalf("row %s %q, buttons %v", id, text, buttons)
		}
	}
	if h.state().Status != workflow.RunCompleted {
		t.Fatalf("the run did not complete again after Keep all: %s", h.state().Status)
	}
}

// TestWorkflowRegenerateAll writes every stale artifact again with the guidance.
func TestWorkflowRegenerateAll(t *testing.T) {
	h, ts := twinChanged(t)
	h.clickRev("U2", conversation.ActionRegenerateAll, "", 0, "intro", "match the new intro")
	for _, id := range []string{"left", "right"} {
		st := h.artifact(id)
		if st.Status != workflow.StatusGenerated || !strings.Contains(st.Text, "match the new intro") {
			t.Fatalf("%s after Regenerate all: %+v", id, st)
		}
		if _, text, buttons := staleRow(h.msgr.card(ts), id); buttons || !strings.Contains(text, "regenerated by <@U2>") {
			t.Fatalf("row %s %q, buttons %v", id, text, buttons)
		}
	}
}

// TestWorkflowStaleRowClosesWhenEditedDirectly: a stale artifact edited (not through
// the list) is handled; its row says so and the list closes once every row is.
func TestWorkflowStaleRowClosesWhenEditedDirectly(t *testing.T) {
	h, ts := twinChanged(t)
	h.say("U1", "edit left shorter")
	if _, _, buttons := staleRow(h.msgr.card(ts), "left"); buttons {
		t.Fatal("the row of an edited stale artifact still offers Keep")
	}
	h.click("U1", conversation.ActionApprove, "left", "", "")
	h.click("U1", conversation.ActionKeep, "right", "", "")
	if h.state().Stale != nil || len(h.msgr.buttons(ts)) != 0 {
		t.Fatalf("the list is not closed: %+v, buttons %q", h.state().Stale, h.msgr.buttons(ts))
	}
}

// TestWorkflowReplacedStaleListIsClosed: a second change before the list is handled
// closes the first list's message; the rows come back on the new one.
func TestWorkflowReplacedStaleListIsClosed(t *testing.T) {
	h, first := twinChanged(t)
	h.say("U1", "edit intro even sharper")
	if labels := h.msgr.buttons(first); len(labels) != 0 {
		t.Fatalf("the replaced list still offers %q", labels)
	}
	if text := h.msgr.cardText(first); !strings.Contains(text, "An updated list follows once *Intro* is approved") {
		t.Fatalf("the replaced list says %q", text)
	}
	h.click("U1", conversation.ActionApprove, "intro", "", "")
	second, list := h.staleList()
	if second == first {
		t.Fatal("the new list was not posted")
	}
	for _, id := range []string{"left", "right"} {
		if _, _, buttons := staleRow(list, id); !buttons {
			t.Fatalf("row %s of the new list has no buttons", id)
		}
	}
}

// TestWorkflowStaleDependentCardsClose: an edit makes a dependent under review stale
// and withdraws a dependent's options: neither message keeps its buttons.
func TestWorkflowStaleDependentCardsClose(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	h.through("U1", "problem")
	h.click("U1", conversation.ActionPick, "audience", "A", "")
	review := h.artifact("audience").MessageTS // audience awaits review
	h.say("U1", "edit problem make it sharper")
	if st := h.artifact("audience").Status; st != workflow.StatusStale {
		t.Fatalf("audience is %s", st)
	}
	if labels := h.msgr.buttons(review); len(labels) != 0 {
		t.Fatalf("the stale audience's review message still offers %q", labels)
	}
	// Options withdrawn: value_proposition's options after audience is approved.
	h = newWF(t)
	h.say("U1", "start product-brief")
	h.through("U1", "problem")
	options := h.artifact("audience").MessageTS // audience's options are shown
	h.say("U1", "edit problem make it sharper")
	if st := h.artifact("audience").Status; st != workflow.StatusPending {
		t.Fatalf("audience is %s", st)
	}
	if labels := h.msgr.buttons(options); len(labels) != 0 || !strings.Contains(h.msgr.cardText(options), "Withdrawn") {
		t.Fatalf("withdrawn options %q, buttons %q", h.msgr.cardText(options), labels)
	}
}

// TestWorkflowFollowUpFailureKeepsTheActionAndRetries: when the options that follow
// an approval cannot be drawn (the model is down, or the turn timed out), the approval
// is kept, the thread is told with Retry, and the next reply tries again too.
func TestWorkflowFollowUpFailureKeepsTheActionAndRetries(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	h.click("U1", conversation.ActionPick, "problem", "A", "")
	h.drain()
	h.agent.fail["options"] = context.DeadlineExceeded // as a turn past TURN_TIMEOUT sees it
	h.click("U1", conversation.ActionApprove, "problem", "", "")
	if st := h.artifact("problem").Status; st != workflow.StatusApproved {
		t.Fatalf("the approval was lost: problem is %s", st)
	}
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "Retry runs this step again") {
		t.Fatalf("not told how to go on: %q", got)
	}
	delete(h.agent.fail, "options")
	h.say("U1", "ok, go on")
	if st := h.artifact("audience").Status; st != workflow.StatusOptionsGenerated {
		t.Fatalf("audience is %s after a reply; want its options", st)
	}
}

// TestPipelineArtifactCards: an edited auto artifact is approved as it is, so its new
// message offers no Approve; the reviewed artifact written from it goes stale and its
// review message loses its buttons; a restart closes the old message, menu included.
func TestPipelineArtifactCards(t *testing.T) {
	pa := newPipelineAgent()
	h := newPipeline(t, nil, pa, 4)
	h.toPipeline()
	finalTS := h.artifact("final").MessageTS
	h.say("U1", "edit sections tighter")
	st := h.artifact("sections")
	if st.Status != workflow.StatusApproved {
		t.Fatalf("edited sections is %s", st.Status)
	}
	if labels := strings.Join(h.msgr.buttons(st.MessageTS), "|"); strings.Contains(labels, "Approve") {
		t.Fatalf("the edited auto artifact's message offers %q", labels)
	}
	if labels := h.msgr.buttons(finalTS); len(labels) != 0 {
		t.Fatalf("final, stale now, still offers %q", labels)
	}

	old := h.artifact("sections").MessageTS
	h.say("U1", "restart sections")
	h.wait()
	if h.artifact("sections").MessageTS == old {
		t.Fatal("the restarted sections were not posted again")
	}
	for _, b := range h.msgr.card(old).Blocks {
		if len(b.Menu) > 0 || len(b.Buttons) > 0 {
			t.Fatalf("the replaced sections message still has a menu or buttons: %+v", b)
		}
	}
}

// TestPipelineEditOfAnAutoArtifactNeedsAnApprover: an edited auto artifact is approved
// as it is, so with APPROVER_USER_IDS set only an approver may edit it.
func TestPipelineEditOfAnAutoArtifactNeedsAnApprover(t *testing.T) {
	pa := newPipelineAgent()
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &pa.scriptedAgent, sum: &foldSummarizer{}}
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: pipelineSet(t), Agent: pa,
		PipelineConcurrency: 4, Approvers: []string{"UBOSS"}})
	h.say("U1", "start article")
	h.click("UBOSS", conversation.ActionApprove, "outline", "", "")
	before := h.artifact("sections").Text
	h.drain()
	h.say("U2", "edit sections tighter")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "may edit artifacts") {
		t.Fatalf("a bystander's edit answered %q", got)
	}
	h.say("U1", "edit sections tighter") // the starter may edit, but not approve
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "only the approvers (<@UBOSS>) may approve") {
		t.Fatalf("the starter's edit answered %q", got)
	}
	if h.artifact("sections").Text != before {
		t.Fatal("a non-approver's edit of an auto artifact was saved")
	}
	h.say("UBOSS", "edit sections tighter")
	if !strings.Contains(h.artifact("sections").Text, "tighter") {
		t.Fatal("the approver's edit was not saved")
	}
}

// TestWorkflowDependentWaitsForItsDependency: value_proposition, written from problem
// and audience, can be neither kept nor regenerated while audience is stale, so it
// cannot end up approved against an audience that then changes.
func TestWorkflowDependentWaitsForItsDependency(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	h.through("U1", "problem", "audience", "value_proposition")
	h.say("U1", "edit problem make it sharper")
	h.click("U1", conversation.ActionApprove, "problem", "", "")
	h.drain()
	h.click("U1", conversation.ActionKeep, "value_proposition", "", "")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "depends on *Target audience*, which is not approved yet") {
		t.Fatalf("Keep of value_proposition before audience answered %q", got)
	}
	// Regenerate all regenerates audience only; value_proposition waits for it.
	h.clickRev("U1", conversation.ActionRegenerateAll, "", 0, "problem", "new angle")
	if st := h.artifact("value_proposition").Status; st != workflow.StatusStale {
		t.Fatalf("value_proposition is %s after Regenerate all; want stale until audience is approved", st)
	}
	h.click("U1", conversation.ActionApprove, "audience", "", "")
	h.click("U1", conversation.ActionRegenerateStale, "value_proposition", "", "follow the new audience")
	if vp := h.artifact("value_proposition"); vp.Status != workflow.StatusGenerated || !strings.Contains(vp.Text, "follow the new audience") {
		t.Fatalf("value_proposition after audience was approved: %+v", vp)
	}
}

// TestWorkflowBystanderCannotTakeOver: under the default permissions a bystander's
// Restart, Edit and cancel (buttons and commands) are refused privately, naming the
// starter, and change nothing; the starter's work. Approving stays open to anyone.
func TestWorkflowBystanderCannotTakeOver(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	h.through("U2", "problem") // a bystander may choose and approve
	h.drain()
	before := h.state().Clone()
	refusals := map[string]func(){
		"restart":      func() { h.click("U2", conversation.ActionRestart, "problem", "", "") },
		"edit":         func() { h.click("U2", conversation.ActionEdit, "problem", "", "bob's version") },
		"cancel":       func() { h.say("U2", "cancel") },
		"restart text": func() { h.say("U2", "restart problem") },
		"edit text":    func() { h.say("U2", "edit problem bob's version") },
	}
	for name, do := range refusals {
		do()
		got := strings.Join(h.drain(), "\n")
		if !strings.Contains(got, "(ephemeral) Sorry, only the person who started it (<@U1>) may") {
			t.Errorf("bystander's %s answered %q", name, got)
		}
		if !reflect.DeepEqual(h.state(), before) {
			t.Fatalf("bystander's %s changed the run", name)
		}
	}
	h.click("U1", conversation.ActionRestart, "problem", "", "")
	if st := h.artifact("problem").Status; st == workflow.StatusApproved {
		t.Fatal("the starter's restart was refused")
	}
	h.say("U1", "cancel")
	if h.state().Status != workflow.RunCancelled {
		t.Fatalf("the starter's cancel left the run %s", h.state().Status)
	}
}
