package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

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

type pickInput struct {
	ID       string `path:"id" doc:"The run's id."`
	Artifact string `path:"artifact" doc:"The artifact's id."`
	Body     struct {
		Revision int    `json:"revision" minimum:"0" doc:"The artifact's revision the action is meant for (Artifact.revision); another gets 409."`
		Option   string `json:"option" minLength:"1" maxLength:"16" doc:"The label of the option to choose (Artifact.options[].label, letter case aside); another gets 422."`
	}
}

type editInput struct {
	ID       string `path:"id" doc:"The run's id."`
	Artifact string `path:"artifact" doc:"The artifact's id."`
	Body     struct {
		Revision int    `json:"revision" minimum:"0" doc:"The artifact's revision the action is meant for (Artifact.revision); another gets 409."`
		Text     string `json:"text" minLength:"1" maxLength:"4000" doc:"How the text should change: the editor rewrites it so."`
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
		Done    bool   `json:"done" doc:"Whether its turn has run (200); false with 202 when it still waits in the thread's queue. With 202 and no run, the run could not be read: done says whether the turn ran."`
		Applied bool   `json:"applied" doc:"Whether the artifact changed (its revision moved on). False after a done turn means the turn refused or failed: the thread says why, and nothing was changed. Without a run, unknown (false)."`
		Run     *Run   `json:"run,omitempty" doc:"The run after the action's turn (or as it is, with 202); absent when the store could not be read after the action was kept, which its turn runs all the same."`
	}
}

// The actions on an artifact (POST /v1/runs/{id}/artifacts/{artifact}:<verb>).
const (
	verbApprove        = "approve"
	verbRequestChanges = "request-changes"
	verbRestart        = "restart"
	verbKeep           = "keep"
	verbRegenerate     = "regenerate"
	verbPick           = "pick"
	verbEdit           = "edit"
)

// request is what an action of the API asks of an artifact: the verb, the revision
// it is meant for, and what it carries (text: a change request, an edit's
// instructions or a regeneration's guidance; option: a pick's label).
type request struct {
	verb   string
	rev    int
	text   string
	option string
}

func (s *Server) registerActions() {
	op := func(verb, summary, desc string) huma.Operation {
		return secured(huma.Operation{
			OperationID: "artifact-" + verb, Method: http.MethodPost, Path: "/v1/runs/{id}/artifacts/{artifact}:" + verb,
			Tags: []string{"artifacts"}, Summary: summary,
			Description: desc + " The same workflow machine and permission rules as in Slack apply; the token acts as api:<name> " +
				"(which APPROVER_USER_IDS may list), and the thread says what it did. 200 once the action's turn ran; 202 when it still waits, " +
				"or when the run could not be read after it (no run; done says whether the turn ran).",
			Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusServiceUnavailable},
		}, ScopeRunsWrite)
	}
	huma.Register(s.api, op(verbPick, "Pick an option of a choice artifact", "Like the option's button on the options card: the artifact is written from it and shown for review."),
		func(ctx context.Context, in *pickInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, request{verb: verbPick, rev: in.Body.Revision, option: in.Body.Option})
		})
	huma.Register(s.api, op(verbApprove, "Approve an artifact under review", "Like its Approve button."),
		func(ctx context.Context, in *actionInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, request{verb: verbApprove, rev: in.Body.Revision})
		})
	huma.Register(s.api, op(verbRequestChanges, "Request changes to an artifact under review", "Like its Request changes button: the editor rewrites the text."),
		func(ctx context.Context, in *changesInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, request{verb: verbRequestChanges, rev: in.Body.Revision, text: in.Body.Text})
		})
	huma.Register(s.api, op(verbEdit, "Edit an artifact that has a text",
		"Like Edit in its menu: the editor rewrites the text as asked and it is shown for review again; when it was approved, "+
			"what was written from it becomes stale (keep or regenerate each once it is approved again). An edit reopens a completed run."),
		func(ctx context.Context, in *editInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, request{verb: verbEdit, rev: in.Body.Revision, text: in.Body.Text})
		})
	huma.Register(s.api, op(verbRestart, "Restart an artifact", "Like /threadwright restart: back to options (or a rewrite); what depends on it becomes stale."),
		func(ctx context.Context, in *actionInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, request{verb: verbRestart, rev: in.Body.Revision})
		})
	huma.Register(s.api, op(verbKeep, "Keep a stale artifact as it is", "Like its Keep button in the stale list."),
		func(ctx context.Context, in *actionInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, request{verb: verbKeep, rev: in.Body.Revision})
		})
	huma.Register(s.api, op(verbRegenerate, "Regenerate an artifact",
		"A stale artifact is rewritten with the guidance (Regenerate with guidance); a choice artifact's options are proposed anew (Regenerate options)."),
		func(ctx context.Context, in *guidedActionInput) (*actionOutput, error) {
			return s.act(ctx, in.ID, in.Artifact, request{verb: verbRegenerate, rev: in.Body.Revision, text: in.Body.Text})
		})
}

// act checks the action req on artifact id against the run as stored, with the
// workflow machine on a copy of its state (so a refusal is answered at once: 403,
// 404, 409, 422), then submits it as the click (or modal submission) its button
// makes, by the token, and waits for its turn, which applies it again, in the
// thread's order.
func (s *Server) act(ctx context.Context, runID, id string, req request) (*actionOutput, error) {
	key, cp, def, err := s.loadRunBounded(ctx, runID)
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
	if req.verb == verbRestart || req.verb == verbEdit {
		m.Reopen(ws) // a restart or an edit reopens a completed run, as in Slack
	}
	if err := m.Running(ws); err != nil {
		return nil, huma.Error409Conflict(fmt.Sprintf("run %s is %s", runID, ws.Status))
	}
	if st.Rev != req.rev {
		return nil, huma.Error409Conflict(fmt.Sprintf("revision %d of %s is not current: it is at revision %d", req.rev, id, st.Rev))
	}
	name, err := applyVerb(m, ws, st, req, id, who)
	if err != nil {
		return nil, refusalProblem(err, id, st)
	}
	in := conversation.Input{ID: newInputID(), Key: key, Kind: conversation.KindAction, Action: &conversation.ActionInput{
		Action: conversation.Action{Name: name, Channel: key.ChannelID, ThreadTS: key.ThreadTS, Artifact: id, Rev: req.rev, Arg: req.option},
		UserID: who, Text: req.text, MessageTS: st.MessageTS,
	}}
	if _, err := s.submit(ctx, in); err != nil {
		return nil, err
	}
	s.log.Info("api: artifact action", "token", tok.Name, "action", req.verb, "run", runID, "artifact", id, "revision", req.rev, "input_id", in.ID)
	out := &actionOutput{}
	out.Body.InputID = in.ID
	out.Status, out.Body.Done, out.Body.Run = s.await(ctx, runID, in.ID)
	if out.Body.Run != nil {
		for _, a := range out.Body.Run.Artifacts {
			if a.ID == id {
				out.Body.Applied = a.Revision != req.rev
			}
		}
	}
	return out, nil
}

// await waits for the turn of input inputID of run runID, kept already, and returns
// the run after it: 200 and done once the turn ran, 202 when the wait (Config.Wait)
// ended first. A store that fails or does not answer (the reads after the wait have
// Config.StoreTimeout together) ends the wait with 202 and, when the run could not be
// read, no run: the input runs in its turn all the same, and an error would have the
// client send it again.
func (s *Server) await(ctx context.Context, runID, inputID string) (status int, done bool, run *Run) {
	status = http.StatusAccepted
	if err := s.poll(ctx, func(ctx context.Context) (bool, error) {
		in, err := s.input(ctx, inputID)
		return err == nil && in.Status != conversation.InputPending, err
	}); err != nil {
		s.log.Warn("api: input kept, its turn not read", "input_id", inputID, "error", err)
		return status, false, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	if in, err := s.input(ctx, inputID); err == nil && in.Status != conversation.InputPending {
		status, done = http.StatusOK, true
	}
	key, cp, def, err := s.loadRun(ctx, runID)
	if err == nil {
		run, err = s.run(ctx, key, cp, def)
	}
	if err != nil {
		// Without the run, whether the turn applied the input is unknown: 202, not
		// a 200 whose applied false would read as a refusal.
		s.log.Warn("api: input kept, its run not read", "input_id", inputID, "run", runID, "error", err)
		return http.StatusAccepted, done, nil
	}
	return status, done, run
}

// applyVerb applies req to artifact id, whose state in ws is st, with m on ws, a copy
// of the run's state, as who. It returns the name of the action that the click to
// submit carries (the one the Slack button or modal carries), and the machine's
// refusal, if any.
func applyVerb(m workflow.Machine, ws *workflow.State, st *workflow.ArtifactState, req request, id, who string) (conversation.ActionName, error) {
	var (
		name conversation.ActionName
		err  error
	)
	switch req.verb {
	case verbPick:
		name = conversation.ActionPick
		_, err = m.Pick(ws, id, req.option)
	case verbApprove:
		name = conversation.ActionApprove
		_, err = m.Approve(ws, id, who)
	case verbRequestChanges:
		name = conversation.ActionRequestChanges
		if st.Status != workflow.StatusGenerated {
			err = &workflow.Refusal{Reason: workflow.NotCurrent, Artifact: id}
		}
	case verbEdit:
		name = conversation.ActionEdit
		err = m.CheckEdit(ws, id, who)
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
			_, err = m.Regenerate(ws, id, who, req.text)
		}
	}
	return name, err
}

// refusalProblem turns the machine's refusal into a problem: 403 when the token may
// not, 404 for an unknown artifact, 422 for a pick of no option of the artifact, 409
// when the artifact is not where the action applies.
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
	case workflow.NoSuchOption:
		labels := make([]string, 0, len(st.Options))
		for _, o := range st.Options {
			labels = append(labels, o.Label)
		}
		return huma.Error422UnprocessableEntity(fmt.Sprintf("%s has no such option", id),
			&huma.ErrorDetail{Location: "body.option", Message: "one of: " + strings.Join(labels, ", ")})
	}
	return huma.Error409Conflict(fmt.Sprintf("%s is %s: the action does not apply (%s)", id, st.Status, r.Reason))
}

func (s *Server) register() {
	s.registerWorkflows()
	s.registerRuns()
	s.registerActions()
	s.registerCancel()
	s.registerMessages()
	s.registerKnowledge()
}
