package api

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// RunSummary is a workflow run as GET /v1/runs lists it.
type RunSummary struct {
	ID        string    `json:"id" doc:"The run's id: <team_id>-<channel_id>-<thread_ts>." example:"T0001-C0001-1700000000.000100"`
	TeamID    string    `json:"team_id"`
	ChannelID string    `json:"channel_id"`
	ThreadTS  string    `json:"thread_ts" doc:"The ts of the thread's root message."`
	Workflow  string    `json:"workflow"`
	Status    string    `json:"status" enum:"running,completed,cancelled"`
	StartedBy string    `json:"started_by" doc:"A Slack user id, or api:<token name> for a run started by the API."`
	UpdatedAt time.Time `json:"updated_at"`
}

// Run is a workflow run with its artifacts.
type Run struct {
	RunSummary
	Permalink string            `json:"permalink,omitempty" doc:"The thread's link (chat.getPermalink)."`
	Inputs    map[string]string `json:"inputs"`
	Artifacts []Artifact        `json:"artifacts" doc:"In declared order."`
}

// Artifact is one artifact of a run.
type Artifact struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Mode   string `json:"mode" enum:"choice,draft,auto"`
	Status string `json:"status" enum:"pending,options_generated,option_selected,generated,approved,stale,running"`
	// Revision is the artifact's Rev: what an action must name.
	Revision     int          `json:"revision" doc:"Increases with every change; an action names the revision it acts on (409 when stale)."`
	Text         string       `json:"text,omitempty" doc:"The artifact's text (Markdown)."`
	Options      []Option     `json:"options,omitempty"`
	Selected     string       `json:"selected,omitempty" doc:"The label of the option chosen."`
	StaleBecause string       `json:"stale_because,omitempty" doc:"The artifact whose change made this one stale."`
	Evaluations  []Evaluation `json:"evaluations,omitempty" doc:"The evaluation of the text against the artifact's criteria."`
	Verdict      *Verdict     `json:"verdict,omitempty" doc:"The evaluation's overall verdict (docs/workflows.md, \"Verdicts\"); absent without an evaluation."`
	Reviewed     bool         `json:"reviewed,omitempty" doc:"The options were reviewed by the model against the criteria and revised once (self_review; docs/workflows.md, \"Pipelines\")."`
	Enhancement  string       `json:"enhancement,omitempty" enum:"enhanced,skipped,failed" doc:"What became of the text's enhancement pass (enhance; docs/workflows.md, \"Pipelines\"): enhanced, skipped (the deployment defines no such model profile) or failed (the text is as written); absent when none was tried."`
	History      []Revision   `json:"history,omitempty" doc:"The kept revisions, oldest first: who did what and when."`
}

// Option is an option proposed for a choice artifact.
type Option struct {
	Label string `json:"label"`
	Title string `json:"title"`
	Text  string `json:"text"`
}

// Evaluation is the verdict on one criterion.
type Evaluation struct {
	Criterion string `json:"criterion"`
	Pass      bool   `json:"pass"`
	Reason    string `json:"reason"`
}

// Verdict is an evaluation's overall verdict (workflow.Definition.Judge).
type Verdict struct {
	Pass           bool     `json:"pass" doc:"Every critical criterion passed, and at least the pass share of the others."`
	Met            int      `json:"met" doc:"Criteria met."`
	Total          int      `json:"total" doc:"Criteria evaluated."`
	CriticalFailed []string `json:"critical_failed,omitempty" doc:"The critical criteria that failed."`
	Before         *Verdict `json:"before,omitempty" doc:"The verdict of the text the automatic revision replaced; absent when none ran."`
}

// verdictOf returns the verdict of eval for artifact a of def, nil without an
// evaluation.
func verdictOf(def *workflow.Definition, a *workflow.Artifact, eval []workflow.CriterionResult) *Verdict {
	if len(eval) == 0 {
		return nil
	}
	v := def.Judge(a, eval)
	return &Verdict{Pass: v.Pass, Met: v.Met, Total: v.Total, CriticalFailed: v.CriticalFailed}
}

// Revision is one kept revision of an artifact (the audit trail).
type Revision struct {
	Number int       `json:"number"`
	Status string    `json:"status" doc:"The artifact's status after it, e.g. approved."`
	By     string    `json:"by,omitempty" doc:"A Slack user id, or api:<token name>; empty for the bot on its own."`
	Why    string    `json:"why"`
	At     time.Time `json:"at"`
}

// runID returns the id of the run of key.
func runID(k conversation.Key) string { return k.TeamID + "-" + k.ChannelID + "-" + k.ThreadTS }

// parseRunID returns the key of run id. Errors: 404 for a malformed id.
func parseRunID(id string) (conversation.Key, error) {
	p := strings.SplitN(id, "-", 3)
	if len(p) != 3 || p[0] == "" || p[1] == "" || p[2] == "" {
		return conversation.Key{}, huma.Error404NotFound("no run " + id)
	}
	return conversation.Key{TeamID: p[0], ChannelID: p[1], ThreadTS: p[2]}, nil
}

// historyLimit bounds the revisions a run's artifacts show.
const historyLimit = 500

// loadRun loads run id: its key, checkpoint, run state and definition. Errors: 404;
// 403 when the request's token may not touch its channel (mayChannel).
func (s *Server) loadRun(ctx context.Context, id string) (conversation.Key, *conversation.Checkpoint, *workflow.Definition, error) {
	key, err := parseRunID(id)
	if err != nil {
		return key, nil, nil, err
	}
	if err := mayChannel(ctx, key.ChannelID); err != nil {
		return key, nil, nil, err
	}
	cp, err := s.cfg.Store.Load(ctx, key, 0)
	if err != nil {
		return key, nil, nil, s.storeError(err, "run "+id)
	}
	ws := cp.Conversation.State.Workflow
	if ws == nil {
		return key, nil, nil, huma.Error404NotFound("no run " + id)
	}
	def, ok := s.cfg.Workflows.Get(ws.Name)
	if !ok {
		return key, nil, nil, huma.Error404NotFound(fmt.Sprintf("run %s: workflow %q is no longer configured", id, ws.Name))
	}
	return key, cp, def, nil
}

// loadRunBounded is loadRun within Config.StoreTimeout: a write's reads before its
// input is kept answer 503 when the store does not answer in time (storeError).
func (s *Server) loadRunBounded(ctx context.Context, id string) (conversation.Key, *conversation.Checkpoint, *workflow.Definition, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	return s.loadRun(ctx, id)
}

// run renders the run of cp, with its revisions.
func (s *Server) run(ctx context.Context, key conversation.Key, cp *conversation.Checkpoint, def *workflow.Definition) (*Run, error) {
	ws := cp.Conversation.State.Workflow
	r := &Run{RunSummary: RunSummary{ID: runID(key), TeamID: key.TeamID, ChannelID: key.ChannelID, ThreadTS: key.ThreadTS,
		Workflow: ws.Name, Status: string(ws.Status), StartedBy: ws.StartedBy, UpdatedAt: cp.Conversation.UpdatedAt},
		Inputs: ws.Inputs, Artifacts: []Artifact{}}
	if r.Inputs == nil {
		r.Inputs = map[string]string{}
	}
	r.Permalink = s.permalink(ctx, key)
	msgs, err := s.cfg.Store.Messages(ctx, key, 0, historyLimit, conversation.RoleRevision)
	if err != nil {
		return nil, s.storeError(err, "run "+r.ID)
	}
	history := map[string][]Revision{}
	for _, m := range msgs {
		var rev workflow.Revision
		if json.Unmarshal(m.Meta, &rev) != nil || rev.Artifact == "" {
			continue
		}
		history[rev.Artifact] = append(history[rev.Artifact], Revision{Number: rev.Number, Status: string(rev.Status), By: rev.By, Why: rev.Why, At: rev.At})
	}
	for _, a := range def.Artifacts {
		st := ws.Artifacts[a.ID]
		if st == nil {
			st = &workflow.ArtifactState{Status: workflow.StatusPending}
		}
		mode := string(a.Mode)
		if mode == "" {
			mode = string(workflow.ModeDraft)
		}
		out := Artifact{ID: a.ID, Title: a.Title, Mode: mode, Status: string(st.Status), Revision: st.Rev, Text: st.Text,
			Selected: st.Selected, StaleBecause: st.StaleBecause, History: history[a.ID], Reviewed: st.Reviewed, Enhancement: st.Enhancement}
		for _, o := range st.Options {
			out.Options = append(out.Options, Option(o))
		}
		for _, e := range st.Eval {
			out.Evaluations = append(out.Evaluations, Evaluation{Criterion: e.ID, Pass: e.Pass, Reason: e.Reason})
		}
		if out.Verdict = verdictOf(def, &a, st.Eval); out.Verdict != nil {
			out.Verdict.Before = verdictOf(def, &a, st.PriorEval)
		}
		r.Artifacts = append(r.Artifacts, out)
	}
	return r, nil
}

// permalinkTimeout bounds permalink's call, so that a slow or rate-limited Slack (a
// 429's Retry-After is waited out) leaves a request's store reads their time.
const permalinkTimeout = 2 * time.Second

// permalink returns the link to the thread of key, or "" (logged) when there is none
// or Slack does not answer within permalinkTimeout.
func (s *Server) permalink(ctx context.Context, key conversation.Key) string {
	if s.cfg.Links == nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, permalinkTimeout)
	defer cancel()
	link, err := s.cfg.Links.Permalink(ctx, key, key.ThreadTS)
	if err != nil {
		s.log.Warn("api: no permalink", "thread", key.String(), "error", err)
		return ""
	}
	return link
}

type runInput struct {
	ID string `path:"id" doc:"The run's id (RunSummary.id)."`
}

type runOutput struct {
	Body *Run
}

type listRunsInput struct {
	Team    string `query:"team_id" doc:"The workspace (default: the bot's)."`
	Channel string `query:"channel" doc:"Only the runs of this channel id."`
	Status  string `query:"status" enum:"running,completed,cancelled" doc:"Only the runs in this status."`
	Limit   int    `query:"limit" minimum:"1" maximum:"200" default:"50" doc:"At most this many; fewer when some are in channels the token may not read."`
}

type listRunsOutput struct {
	Body struct {
		Runs []RunSummary `json:"runs" doc:"Most recently updated first."`
	}
}

type reportOutput struct {
	Body struct {
		Markdown string `json:"markdown" doc:"The report, rendered from the workflow's report template."`
		Draft    bool   `json:"draft" doc:"True until the run is completed: artifacts not approved are marked."`
	}
}

func (s *Server) registerRuns() {
	huma.Register(s.api, secured(huma.Operation{
		OperationID: "list-runs", Method: http.MethodGet, Path: "/v1/runs", Tags: []string{"runs"},
		Summary: "List workflow runs", Errors: []int{http.StatusUnauthorized, http.StatusUnprocessableEntity},
	}, ScopeRunsRead), func(ctx context.Context, in *listRunsInput) (*listRunsOutput, error) {
		team := in.Team
		if team == "" {
			team = s.cfg.TeamID
		}
		if in.Channel != "" {
			if err := mayChannel(ctx, in.Channel); err != nil {
				return nil, err
			}
		}
		refs, err := s.cfg.Store.Runs(ctx, conversation.RunQuery{TeamID: team, ChannelID: in.Channel, Status: workflow.RunStatus(in.Status), Limit: in.Limit})
		if err != nil {
			return nil, s.storeError(err, "runs")
		}
		out := &listRunsOutput{}
		out.Body.Runs = []RunSummary{}
		for _, r := range refs {
			if !actor(ctx).MayChannel(r.Key.ChannelID) {
				continue // another channel's, or a direct message's
			}
			out.Body.Runs = append(out.Body.Runs, RunSummary{ID: runID(r.Key), TeamID: r.Key.TeamID, ChannelID: r.Key.ChannelID, ThreadTS: r.Key.ThreadTS,
				Workflow: r.Workflow, Status: string(r.Status), StartedBy: r.StartedBy, UpdatedAt: r.UpdatedAt})
		}
		return out, nil
	})
	huma.Register(s.api, secured(huma.Operation{
		OperationID: "get-run", Method: http.MethodGet, Path: "/v1/runs/{id}", Tags: []string{"runs"},
		Summary: "Get a run: its state, artifacts, evaluations and revisions", Errors: []int{http.StatusUnauthorized, http.StatusNotFound},
	}, ScopeRunsRead), func(ctx context.Context, in *runInput) (*runOutput, error) {
		key, cp, def, err := s.loadRun(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		r, err := s.run(ctx, key, cp, def)
		if err != nil {
			return nil, err
		}
		return &runOutput{Body: r}, nil
	})
	huma.Register(s.api, secured(huma.Operation{
		OperationID: "start-run", Method: http.MethodPost, Path: "/v1/runs", Tags: []string{"runs"}, DefaultStatus: http.StatusCreated,
		Summary:     "Start a workflow in a channel",
		Description: "The bot posts the thread's root message and the run proceeds in Slack exactly as if started there, with the token as its starter. 201 once the thread is posted and the run saved; 202 when that takes longer than the server waits; 502 when the bot could not post the thread.",
		Errors:      []int{http.StatusUnauthorized, http.StatusUnprocessableEntity, http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable},
	}, ScopeRunsWrite), s.startRun)
	huma.Register(s.api, secured(huma.Operation{
		OperationID: "get-run-report", Method: http.MethodGet, Path: "/v1/runs/{id}/report", Tags: []string{"runs"},
		Summary: "Get a run's report (Markdown)", Errors: []int{http.StatusUnauthorized, http.StatusNotFound},
	}, ScopeRunsRead), func(ctx context.Context, in *runInput) (*reportOutput, error) {
		_, cp, def, err := s.loadRun(ctx, in.ID)
		if err != nil {
			return nil, err
		}
		ws := cp.Conversation.State.Workflow
		texts, approved := map[string]string{}, map[string]bool{}
		for id, st := range ws.Artifacts {
			texts[id], approved[id] = st.Text, st.Status == workflow.StatusApproved
		}
		out := &reportOutput{}
		out.Body.Draft = ws.Status != workflow.RunCompleted
		md, err := def.RenderReport(workflow.ReportData{Workflow: def, Artifacts: texts, Approved: approved, Draft: out.Body.Draft, Inputs: ws.Inputs})
		if err != nil {
			s.log.Error("api: render report", "run", in.ID, "error", err)
			return nil, huma.Error500InternalServerError("the report could not be rendered")
		}
		out.Body.Markdown = md
		return out, nil
	})
}
