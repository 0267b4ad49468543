package service_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/prompts"
)

// scriptedAgent is a deterministic WorkflowAgent: options "<artifact> option A/B/C",
// texts that name what they were written from, every criterion passing.
type scriptedAgent struct {
	mu    sync.Mutex
	calls []string
	// fail, when set, makes the named method fail.
	fail map[string]error
	// write, when set, answers Write in its place (after the call is recorded).
	write func(r conversation.ArtifactRequest) (string, error)
}

func (a *scriptedAgent) record(ctx context.Context, method string, r conversation.ArtifactRequest) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	id := ""
	if r.Artifact != nil {
		id = r.Artifact.ID
	}
	a.calls = append(a.calls, method+" "+id)
	return a.fail[method]
}

func (a *scriptedAgent) ProposeOptions(ctx context.Context, r conversation.ArtifactRequest) ([]workflow.Option, conversation.Usage, error) {
	if err := a.record(ctx, "options", r); err != nil {
		return nil, conversation.Usage{}, err
	}
	var out []workflow.Option
	for i := range r.Artifact.Options {
		l := string(rune('A' + i))
		out = append(out, workflow.Option{Label: l, Title: r.Artifact.ID + " " + l, Text: r.Artifact.ID + " option " + l})
	}
	return out, conversation.Usage{PromptTokens: 1}, nil
}

func (a *scriptedAgent) InterpretReply(ctx context.Context, r conversation.ArtifactRequest, reply string) (conversation.Selection, conversation.Usage, error) {
	if err := a.record(ctx, "interpret", r); err != nil {
		return conversation.Selection{}, conversation.Usage{}, err
	}
	label, rest, _ := strings.Cut(reply, ",")
	return conversation.Selection{Label: strings.TrimSpace(label), Instructions: strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(rest), "but"))}, conversation.Usage{}, nil
}

// ClassifyReview reads every reply the phrase list leaves to it as a change request,
// except one containing "hmm", which it finds ambiguous.
func (a *scriptedAgent) ClassifyReview(ctx context.Context, r conversation.ArtifactRequest, reply string) (conversation.ReviewReading, conversation.Usage, error) {
	if err := a.record(ctx, "classify", r); err != nil {
		return conversation.ReviewReading{}, conversation.Usage{}, err
	}
	if strings.Contains(reply, "hmm") {
		return conversation.ReviewReading{Decision: workflow.DecisionAmbiguous, Confidence: 0.9}, conversation.Usage{}, nil
	}
	return conversation.ReviewReading{Decision: workflow.DecisionChange, Confidence: 0.9}, conversation.Usage{}, nil
}

func (a *scriptedAgent) Write(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if err := a.record(ctx, "write", r); err != nil {
		return "", conversation.Usage{}, err
	}
	if a.write != nil {
		text, err := a.write(r)
		return text, conversation.Usage{}, err
	}
	from := "scratch"
	if r.Selected != nil {
		from = r.Selected.Text
	}
	text := fmt.Sprintf("%s text from %s", r.Artifact.ID, from)
	if r.Instructions != "" {
		text += " (" + r.Instructions + ")"
	}
	return text, conversation.Usage{}, nil
}

func (a *scriptedAgent) Revise(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if err := a.record(ctx, "revise", r); err != nil {
		return "", conversation.Usage{}, err
	}
	return r.Current + " [revised: " + r.Instructions + "]", conversation.Usage{}, nil
}

func (a *scriptedAgent) Evaluate(ctx context.Context, r conversation.ArtifactRequest, _ string) ([]workflow.CriterionResult, conversation.Usage, error) {
	if err := a.record(ctx, "evaluate", r); err != nil {
		return nil, conversation.Usage{}, err
	}
	var out []workflow.CriterionResult
	for _, c := range r.Artifact.Criteria {
		out = append(out, workflow.CriterionResult{ID: c.ID, Pass: true, Reason: "fine"})
	}
	return out, conversation.Usage{}, nil
}

func (a *scriptedAgent) Summarize(ctx context.Context, r conversation.ArtifactRequest) (string, conversation.Usage, error) {
	if err := a.record(ctx, "summarize", r); err != nil {
		return "", conversation.Usage{}, err
	}
	return "All done.", conversation.Usage{}, nil
}

func (a *scriptedAgent) Recover(ctx context.Context, r conversation.ArtifactRequest, failures []string) (workflow.Recovery, conversation.Usage, error) {
	if err := a.record(ctx, "recover", r); err != nil {
		return workflow.Recovery{}, conversation.Usage{}, err
	}
	return workflow.Recovery{Instructions: "try narrower queries", Rationale: fmt.Sprintf("%d failures", len(failures))}, conversation.Usage{}, nil
}

func builtins(t *testing.T) *workflow.Set {
	t.Helper()
	defs, err := workflow.Load(prompts.Workflows, "workflows", workflow.BuiltinPrefix)
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(defs...)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// wfHarness runs a Service with the built-in workflows and a scripted agent.
type wfHarness struct {
	t     testing.TB
	st    conversation.Store
	msgr  *fakeMessenger
	agent *scriptedAgent
	svc   *service.Service
	sum   *foldSummarizer
	n     int
}

func newWF(t *testing.T, approvers ...string) *wfHarness {
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &scriptedAgent{fail: map[string]error{}}, sum: &foldSummarizer{}}
	// A small window, so that the history is summarized along the way: the artifact
	// texts and selections must not depend on it.
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: builtins(t), Agent: h.agent,
		Approvers: approvers, Summarizer: h.sum, HistoryMessages: 6})
	return h
}

// do submits an input and waits until its turn is saved (its input done).
func (h *wfHarness) do(in conversation.Input) {
	h.t.Helper()
	if ok, err := h.svc.Submit(context.Background(), in); err != nil || !ok {
		h.t.Fatalf("submit %s: %v %v", in.ID, ok, err)
	}
	h.wait()
}

func (h *wfHarness) say(user, text string) {
	h.n++
	ts := fmt.Sprintf("100.%03d", h.n)
	in := mention(key, ts, text)
	in.Message.UserID = user
	h.do(in)
}

func (h *wfHarness) click(user string, name conversation.ActionName, artifact, arg, text string) {
	h.clickRev(user, name, artifact, h.artifact(artifact).Rev, arg, text)
}

func (h *wfHarness) clickRev(user string, name conversation.ActionName, artifact string, rev int, arg, text string) {
	h.n++
	a := conversation.Action{Name: name, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: artifact, Rev: rev, Arg: arg}
	h.do(conversation.Input{ID: fmt.Sprintf("int:T1:trigger%d", h.n), Key: key, Kind: conversation.KindAction,
		Action: &conversation.ActionInput{Action: a, UserID: user, Text: text}})
}

func (h *wfHarness) state() *workflow.State {
	cp, err := h.st.Load(context.Background(), key, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	return cp.Conversation.State.Workflow
}

func (h *wfHarness) artifact(id string) *workflow.ArtifactState { return h.state().Artifacts[id] }

// statuses returns "id=status" for every artifact, in workflow order.
func (h *wfHarness) statuses(def *workflow.Definition) string {
	var out []string
	ws := h.state()
	for _, id := range def.Order() {
		out = append(out, id+"="+string(ws.Artifacts[id].Status))
	}
	return strings.Join(out, " ")
}

// drain returns everything posted so far.
func (h *wfHarness) drain() []string {
	var out []string
	for {
		select {
		case s := <-h.msgr.posted:
			out = append(out, s)
		default:
			return out
		}
	}
}

func (h *wfHarness) wait() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.svc.Wait(ctx); err != nil {
		h.t.Fatal(err)
	}
}

func TestWorkflowProductBrief(t *testing.T) {
	h := newWF(t)
	def, _ := builtins(t).Get("product-brief")
	h.say("U1", "start product-brief")
	if got := h.statuses(def); !strings.HasPrefix(got, "problem=options_generated audience=pending") {
		t.Fatalf("after start: %s", got)
	}
	// problem by button, audience by a free-text reply, the rest by buttons.
	h.click("U1", conversation.ActionPick, "problem", "B", "")
	h.click("U2", conversation.ActionApprove, "problem", "", "")
	h.n++
	h.do(reply(key, fmt.Sprintf("100.%03d", h.n), "A, but shorter"))
	if txt := h.artifact("audience").Text; txt != "audience text from audience option A (shorter)" {
		t.Fatalf("audience from a reply: %q", txt)
	}
	h.click("U1", conversation.ActionApprove, "audience", "", "")
	for _, id := range []string{"value_proposition", "positioning", "name"} {
		h.click("U1", conversation.ActionPick, id, "C", "")
		h.click("U1", conversation.ActionApprove, id, "", "")
	}
	ws := h.state()
	if ws.Status != workflow.RunCompleted {
		t.Fatalf("workflow %s: %s", ws.Status, h.statuses(def))
	}
	if posted := strings.Join(h.drain(), "\n"); !strings.Contains(posted, "(file) product-brief.md") {
		t.Fatalf("no report uploaded:\n%s", posted)
	}
	// Every option set after the first was drawn with the approved artifacts before it.
	if ws.Artifacts["problem"].Selected != "B" || ws.Artifacts["name"].Selected != "C" {
		t.Fatalf("selections: %+v", ws.Artifacts)
	}
}

// TestWorkflowProposalEditMarksStale drives proposal to the end, edits methodology, and
// checks exactly its transitive dependents went stale; keeps one, regenerates another.
func TestWorkflowProposalEditMarksStale(t *testing.T) {
	h := newWF(t)
	def, _ := builtins(t).Get("proposal")
	h.say("U1", "start proposal")
	for range 20 {
		next := ""
		for _, id := range def.Order() {
			switch h.artifact(id).Status {
			case workflow.StatusOptionsGenerated:
				h.click("U1", conversation.ActionPick, id, "A", "")
				next = id
			case workflow.StatusGenerated:
				h.click("U1", conversation.ActionApprove, id, "", "")
				next = id
			}
			if next != "" {
				break
			}
		}
		if next == "" {
			break
		}
	}
	if h.state().Status != workflow.RunCompleted {
		t.Fatalf("proposal not completed: %s", h.statuses(def))
	}
	h.say("U1", "edit methodology add a pilot phase")
	want := "research=approved solution=approved connections=approved problem_statement=approved methodology=generated timeline=stale budget=stale conclusion=stale"
	if got := h.statuses(def); got != want {
		t.Fatalf("after edit:\n got %s\nwant %s", got, want)
	}
	if !strings.Contains(h.artifact("methodology").Text, "[revised: add a pilot phase]") {
		t.Fatalf("methodology text %q", h.artifact("methodology").Text)
	}
	h.click("U1", conversation.ActionApprove, "methodology", "", "")
	h.click("U1", conversation.ActionKeep, "timeline", "", "")
	h.click("U1", conversation.ActionRegenerateStale, "budget", "", "use the new pilot costs")
	if got := h.artifact("budget"); got.Status != workflow.StatusGenerated || !strings.Contains(got.Text, "use the new pilot costs") {
		t.Fatalf("budget after regenerate: %+v", got)
	}
	h.say("U1", "export")
	if posted := strings.Join(h.drain(), "\n"); !strings.Contains(posted, "(file) proposal-draft.md") {
		t.Fatalf("no draft export:\n%s", posted)
	}
	// Every revision is kept.
	cp, err := h.st.Load(context.Background(), key, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var revisions int
	for _, m := range cp.Messages {
		if m.Role == conversation.RoleRevision && strings.Contains(string(m.Meta), `"artifact":"methodology"`) {
			revisions++
		}
	}
	if revisions < 3 { // written, approved, edited, approved
		t.Fatalf("%d methodology revisions kept", revisions)
	}
	h.sum.mu.Lock()
	defer h.sum.mu.Unlock()
	if len(h.sum.requests) == 0 || h.sum.requests[0].Workflow != "proposal" {
		t.Fatalf("the history was not summarized as a workflow's (%d summaries)", len(h.sum.requests))
	}
}

func TestWorkflowStaleAndDoubleClicks(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	rev := h.artifact("problem").Rev
	h.click("U1", conversation.ActionPick, "problem", "A", "")
	h.drain()
	// A second click on the same options message (a double click, or an old message).
	h.clickRev("U1", conversation.ActionPick, "problem", rev, "B", "")
	if got := h.drain(); len(got) != 1 || !strings.Contains(got[0], "no longer current") {
		t.Fatalf("stale click answered %q", got)
	}
	if h.artifact("problem").Selected != "A" {
		t.Fatal("a stale click changed the selection")
	}
}

func TestWorkflowApproversRestricted(t *testing.T) {
	h := newWF(t, "UBOSS")
	h.say("U1", "start product-brief")
	h.click("U1", conversation.ActionPick, "problem", "A", "")
	h.drain()
	h.click("U1", conversation.ActionApprove, "problem", "", "")
	if got := h.drain(); len(got) != 1 || !strings.Contains(got[0], "only the approvers (<@UBOSS>)") {
		t.Fatalf("refusal %q", got)
	}
	if h.artifact("problem").Status != workflow.StatusGenerated {
		t.Fatal("a refused approval changed the status")
	}
	h.click("UBOSS", conversation.ActionApprove, "problem", "", "")
	if h.artifact("problem").Status != workflow.StatusApproved {
		t.Fatal("the approver's approval did not count")
	}
}

type noCommit struct{}

func (noCommit) Error() string { return "agents: the model did not commit its work" }
func (noCommit) UserMessage() string {
	return "The model did not save the artifact; nothing was changed."
}

func TestWorkflowCommitNeverCalledChangesNothing(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	before := *h.artifact("problem")
	h.agent.fail["write"] = noCommit{}
	h.drain()
	h.click("U1", conversation.ActionPick, "problem", "A", "")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "nothing was changed") {
		t.Fatalf("user not told: %q", got)
	}
	after := h.artifact("problem")
	if after.Status != before.Status || after.Selected != "" || after.Rev != before.Rev || after.Text != "" {
		t.Fatalf("half-committed: before %+v after %+v", before, *after)
	}
}

func TestWorkflowCommandErrors(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start nosuchflow")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "no workflow named `nosuchflow`") || !strings.Contains(got, "product-brief") {
		t.Fatalf("unknown workflow: %q", got)
	}
	h.say("U1", "start product-brief")
	h.drain()
	h.say("U1", "restart nosuchartifact")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "no artifact `nosuchartifact`") || !strings.Contains(got, "`audience`") {
		t.Fatalf("unknown artifact: %q", got)
	}
}

func TestWorkflowApproversStarter(t *testing.T) {
	def, err := workflow.Parse("test.yaml", []byte(`name: memo
title: Memo
approvers: starter
artifacts:
  - id: body
    title: Body
    criteria:
      - id: short
        description: Fits one screen
report: "{{ artifact \"body\" }}"
`))
	if err != nil {
		t.Fatal(err)
	}
	set, err := workflow.NewSet(def)
	if err != nil {
		t.Fatal(err)
	}
	h := &wfHarness{t: t, st: openStore(t, t.TempDir()), msgr: newMessenger(), agent: &scriptedAgent{fail: map[string]error{}}, sum: &foldSummarizer{}}
	h.svc = newService(t, service.Config{Store: h.st, Messenger: h.msgr, Executor: &echo{}, Workflows: set, Agent: h.agent})
	h.say("U1", "start memo")
	h.drain()
	h.click("U2", conversation.ActionApprove, "body", "", "")
	if got := h.drain(); len(got) != 1 || !strings.Contains(got[0], "only the person who started it (<@U1>)") {
		t.Fatalf("refusal %q", got)
	}
	h.click("U1", conversation.ActionApprove, "body", "", "")
	if h.state().Status != workflow.RunCompleted {
		t.Fatalf("the starter's approval did not complete the memo: %s", h.statuses(def))
	}
}

func TestWorkflowStatusAndCancel(t *testing.T) {
	h := newWF(t)
	h.say("U1", "start product-brief")
	h.drain()
	h.say("U1", "status")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "Product brief*: status") {
		t.Fatalf("status: %q", got)
	}
	h.say("U1", "cancel")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "cancelled by <@U1>") {
		t.Fatalf("cancel: %q", got)
	}
	if h.state().Status != workflow.RunCancelled {
		t.Fatalf("status %s", h.state().Status)
	}
	// A click on the cancelled workflow's buttons is out of date; a new start works.
	h.click("U1", conversation.ActionPick, "problem", "A", "")
	if got := strings.Join(h.drain(), "\n"); !strings.Contains(got, "no longer current") {
		t.Fatalf("click after cancel: %q", got)
	}
	h.say("U1", "start product-brief")
	if h.state().Status != workflow.RunRunning {
		t.Fatal("a new start after cancel did not run")
	}
}
