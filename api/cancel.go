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

type cancelOutput struct {
	Status int
	Body   struct {
		InputID string `json:"input_id" doc:"The durable input that carries the cancel."`
		Done    bool   `json:"done" doc:"Whether its turn has run (200); false with 202 when it still waits in the thread's queue. With 202 and no run, the run could not be read: done says whether the turn ran."`
		Applied bool   `json:"applied" doc:"Whether the run is cancelled. False after a done turn means the turn refused it: the thread says why. Without a run, unknown (false)."`
		Run     *Run   `json:"run,omitempty" doc:"The run after the cancel's turn (or as it is, with 202); absent when the store could not be read after the cancel was kept, which its turn runs all the same."`
	}
}

// registerCancel registers POST /v1/runs/{id}:cancel.
func (s *Server) registerCancel() {
	huma.Register(s.api, secured(huma.Operation{
		OperationID: "cancel-run", Method: http.MethodPost, Path: "/v1/runs/{id}:cancel", Tags: []string{"runs"},
		Summary: "Cancel a running workflow",
		Description: "Like /threadwright cancel in its thread: the run stops where it is (a pipeline under way ends) and the thread goes back to " +
			"answering questions. The workflow's cancel rule applies, as in Slack; the token acts as api:<name>, and the thread says who cancelled it. " +
			"200 once the cancel's turn ran; 202 when it still waits, or when the run could not be read after it (no run; done says whether the turn ran); " +
			"409 for a run that is not running.",
		Errors: []int{http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusConflict, http.StatusTooManyRequests, http.StatusServiceUnavailable},
	}, ScopeRunsWrite), s.cancel)
}

// cancel checks the cancel of run in.ID with the workflow machine on a copy of its
// state (403, 409 at once), then submits "/threadwright cancel" in the run's thread as
// the token, the command Slack's cancel is, and waits for its turn.
func (s *Server) cancel(ctx context.Context, in *runInput) (*cancelOutput, error) {
	key, cp, def, err := s.loadRunBounded(ctx, in.ID)
	if err != nil {
		return nil, err
	}
	tok := actor(ctx)
	ws := cp.Conversation.State.Workflow.Clone()
	if err := s.machine(def).Cancel(ws, tok.Actor()); err != nil {
		if refusalOf(err) == workflow.NotAllowed {
			return nil, refusalProblem(err, "", nil)
		}
		return nil, huma.Error409Conflict(fmt.Sprintf("run %s is %s", in.ID, cp.Conversation.State.Workflow.Status))
	}
	cmd := conversation.Input{ID: newInputID(), Key: key, Kind: conversation.KindCommand,
		Command: &conversation.CommandInput{Source: conversation.SourceAPI, UserID: tok.Actor(), Line: conversation.CmdCancel}}
	if _, err := s.submit(ctx, cmd); err != nil {
		return nil, err
	}
	s.log.Info("api: run cancel", "token", tok.Name, "run", in.ID, "input_id", cmd.ID)
	out := &cancelOutput{}
	out.Body.InputID = cmd.ID
	out.Status, out.Body.Done, out.Body.Run = s.await(ctx, in.ID, cmd.ID)
	out.Body.Applied = out.Body.Run != nil && out.Body.Run.Status == string(workflow.RunCancelled)
	return out, nil
}

// refusalOf returns the reason of the machine's refusal err ("" for another error).
func refusalOf(err error) workflow.RefusalReason {
	var r *workflow.Refusal
	if errors.As(err, &r) {
		return r.Reason
	}
	return ""
}
