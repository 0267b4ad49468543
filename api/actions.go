package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

type actionBody struct {
	Revision int `json:"revision" minimum:"0" doc:"The artifact's revision the action is meant for (Artifact.revision); another gets 409."`
}

type actionInput struct {
	ID       string `path:"id" doc:"The run's id."`
	Artifact string `path:"artifact" doc:"The artifact's id."`
	Body     actionBody
}

type guidedActionInput struct {
	ID       string `path:"id" doc:"The run's id."`
	Artifact string `path:"artifact" doc:"The artifact's id."`
	Body     struct {
		Revision int    `json:"revision" minimum:"0" doc:"The artifact's revision the action is meant for (Artifact.revision); another gets 409."`
		Text     string `json:"text,omitempty" maxLength:"4000" doc:"Guidance for the new text (regenerate of a stale artifact)."`
	}
}

type changesInput struct {
	ID       string `path:"id" doc:"The run's id."`
	Artifact string `path:"artifact" doc:"The artifact's id."`
	Body     struct {
		Revision int    `json:"revision" minimum:"0" doc:"The artifact's revision the action is meant for (Artifact.revision); another gets 409."`
		Text     string `json:"text" minLength:"1" maxLength:"4000" doc:"What to change."`
	}
}

type actionOutput struct {
	Status int
	Body   struct {
		InputID string `json:"input_id" doc:"The durable input that carries the action."`
		Done    bool   `json:"done" doc:"Whether its turn has run (200); false with 202 when it still waits in the thread's queue."`
		Applied bool   `json:"applied" doc:"Whether the artifact changed (its revision moved on). False after a done turn means the turn refused or failed: the thread says why, and nothing was changed."`
		Run     *Run   `json:"run" doc:"The run after the action's turn (or as it is, with 202)."`
	}
}

// The actions on an artifact (POST /v1/runs/{id}/artifacts/{artifact}:<verb>).
const (
	verbApprove        = "approve"
	verbRequestChanges = "request-changes"
	verbRestart        = "restart"
	verbKeep           = "keep"
	verbRegenerate     = "regenerate"
)

func (s *Server) registerActions() {
	op := func(verb, summary, desc string) huma.Operation {
		return secured(huma.Operation{
			OperationID: "artifact-" + verb, Method: http.MethodPost, Path: "/v1/runs/{id}/artifacts/{artifact}:" + verb,
			Tags: []string{"artifacts"}, Summary: summary,
			Description: desc + " The same workflow machine and permission rules as in Slack apply; the token acts as api:<name> " +
				"(which APPROVER_USER_IDS may list), and the thread says what it did. 200 once the action's turn ran; 202 when it still waits.",
			Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity},
		}, ScopeRunsWrite)
	}
	huma.Register(s.api, op(verbApprove, "Approve an artifact under review", "Like its Approve button."),
		func(ctx context.Context, in *actionInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, verbApprove, in.Body.Revision, "")
		})
	huma.Register(s.api, op(verbRequestChanges, "Request changes to an artifact under review", "Like its Request changes button: the editor rewrites the text."),
		func(ctx context.Context, in *changesInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, verbRequestChanges, in.Body.Revision, in.Body.Text)
		})
	huma.Register(s.api, op(verbRestart, "Restart an artifact", "Like /threadwright restart: back to options (or a rewrite); what depends on it becomes stale."),
		func(ctx context.Context, in *actionInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, verbRestart, in.Body.Revision, "")
		})
	huma.Register(s.api, op(verbKeep, "Keep a stale artifact as it is", "Like its Keep button in the stale list."),
		func(ctx context.Context, in *actionInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, verbKeep, in.Body.Revision, "")
		})
	huma.Register(s.api, op(verbRegenerate, "Regenerate an artifact",
		"A stale artifact is rewritten with the guidance (Regenerate with guidance); a choice artifact's options are proposed anew (Regenerate options)."),
		func(ctx context.Context, in *guidedActionInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, verbRegenerate, in.Body.Revision, in.Body.Text)
		})
}

// act checks the action against the run as stored, with the workflow machine on a
// copy of its state (so a refusal is answered at once: 403, 404, 409), then
// submits it as a click by the token and waits for its turn, which applies it
// again, in the thread's order.
func (s *Server) act(ctx context.Context, runID, id, verb string, rev int, text string) (*actionOutput, error) {
	key, cp, def, err := s.loadRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	tok := actor(ctx)
	who := tok.Actor()
	ws := cp.Conversation.State.Workflow.Clone()
	m := s.machine(def)
	st, ok := ws.Artifacts[id]
	if _, declared := def.Artifact(id); !declared || !ok {
		return nil, huma.Error404NotFound(fmt.Sprintf("run %s has no artifact %s", runID, id))
	}
	if verb == verbRestart {
		m.Reopen(ws) // a restart reopens a completed run, as in Slack
	}
	if err := m.Running(ws); err != nil {
		return nil, huma.Error409Conflict(fmt.Sprintf("run %s is %s", runID, ws.Status))
	}
	if st.Rev != rev {
		return nil, huma.Error409Conflict(fmt.Sprintf("revision %d of %s is not current: it is at revision %d", rev, id, st.Rev))
	}
	name, err := applyVerb(m, ws, st, verb, id, who, text)
	if err != nil {
		return nil, refusalProblem(err, id, st)
	}
	in := conversation.Input{ID: newInputID(), Key: key, Kind: conversation.KindAction, Action: &conversation.ActionInput{
		Action: conversation.Action{Name: name, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: id, Rev: rev},
		UserID: who, Text: text, MessageTS: st.MessageTS,
	}}
	if err := s.submit(ctx, in); err != nil {
		return nil, err
	}
	s.log.Info("api: artifact action", "token", tok.Name, "action", verb, "run", runID, "artifact", id, "revision", rev, "input_id", in.ID)
	out := &actionOutput{Status: http.StatusAccepted}
	out.Body.InputID = in.ID
	if err := s.poll(ctx, func(ctx context.Context) (bool, error) {
		st, err := s.cfg.Store.InputStatus(ctx, in.ID)
		return err == nil && st != conversation.InputPending, err
	}); err != nil {
		return nil, err
	}
	if st, err := s.cfg.Store.InputStatus(ctx, in.ID); err == nil && st != conversation.InputPending {
		out.Status, out.Body.Done = http.StatusOK, true
	}
	if _, cp, def, err = s.loadRun(ctx, runID); err != nil {
		return nil, err
	}
	if out.Body.Run, err = s.run(ctx, key, cp, def); err != nil {
		return nil, err
	}
	for _, a := range out.Body.Run.Artifacts {
		if a.ID == id {
			out.Body.Applied = a.Revision != rev
		}
	}
	return out, nil
}

// applyVerb applies verb to artifact id, whose state in ws is st, with m on ws, a copy
// of the run's state, as who (text: a regeneration's guidance). It returns the name of
// the action that the click to submit carries, and the machine's refusal, if any.
func applyVerb(m workflow.Machine, ws *workflow.State, st *workflow.ArtifactState, verb, id, who, text string) (conversation.ActionName, error) {
	var (
		name conversation.ActionName
		err  error
	)
	switch verb {
	case verbApprove:
		name = conversation.ActionApprove
		_, err = m.Approve(ws, id, who)
	case verbRequestChanges:
		name = conversation.ActionRequestChanges
		if st.Status != workflow.StatusGenerated {
			err = &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
		}
	case verbRestart:
		name = conversation.ActionRestart
		_, err = m.Restart(ws, id, who)
	case verbKeep:
		name = conversation.ActionKeep
		_, err = m.Keep(ws, id, who)
	case verbRegenerate:
		switch st.Status {
		case workflow.StatusOptionsGenerated:
			name = conversation.ActionRegenerate
		default:
			name = conversation.ActionRegenerateStale
			_, err = m.Regenerate(ws, id, who, text)
		}
	}
	return name, err
}

// refusalProblem turns the machine's refusal into a problem: 403 when the token may
// not, 404 for an unknown artifact, 409 when the artifact is not where the action
// applies.
func refusalProblem(err error, id string, st *workflow.ArtifactState) error {
	var r *workflow.Refusal
	if !errors.As(err, &r) {
		return huma.Error409Conflict(err.Error())
	}
	switch r.Reason {
	case workflow.NotAllowed:
		return huma.Error403Forbidden(fmt.Sprintf("this token may not %s here (the workflow's %s rule)", r.Action, r.Action))
	case workflow.UnknownArtifact:
		return huma.Error404NotFound("no artifact " + id)
	case workflow.ChangePending:
		return huma.Error409Conflict(fmt.Sprintf("%s waits for %s to be approved again", id, r.Source))
	}
	return huma.Error409Conflict(fmt.Sprintf("%s is %s: the action does not apply (%s)", id, st.Status, r.Reason))
}

func (s *Server) register() {
	s.registerWorkflows()
	s.registerRuns()
	s.registerActions()
	s.registerMessages()
	s.registerKnowledge()
}
