package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cenkalti/backoff/v4"
	"github.com/danielgtaylor/huma/v2"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
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

// permalink returns the link to the thread of key, or "" (logged) when there is none.
func (s *Server) permalink(ctx context.Context, key conversation.Key) string {
	if s.cfg.Links == nil {
		return ""
	}
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

type startRunInput struct {
	IdempotencyKey string `header:"Idempotency-Key" maxLength:"255" pattern:"^[!-~]+$" doc:"A key of your choosing, 1 to 255 visible ASCII characters, that makes the request safe to send again: the same token sending the same key starts at most one run, and each repeat answers with that run as it is now (201), 202 while it is pending, 502 if it failed. Reusing the key for another workflow, channel, workspace or inputs answers 422; an empty value too. Kept until RETENTION_DAYS after the first request. docs/api.md, \"Starting a run safely\"."`
	Body           struct {
		Workflow string            `json:"workflow" minLength:"1" doc:"The workflow's name (GET /v1/workflows)."`
		Channel  string            `json:"channel" minLength:"1" maxLength:"32" pattern:"^[A-Z0-9]+$" doc:"The channel id to start it in, such as C0123ABCD; the bot posts the thread's root message there."`
		TeamID   string            `json:"team_id,omitempty" maxLength:"32" pattern:"^[A-Z0-9]+$" doc:"The workspace (default: the bot's)."`
		Inputs   map[string]string `json:"inputs,omitempty" doc:"Values of the workflow's inputs, by id; every required input must be given."`
	}
}

// Resolve refuses an Idempotency-Key header sent empty, which huma takes for no header:
// a client whose key came out empty would lose the protection it asked for.
func (in *startRunInput) Resolve(ctx huma.Context) []error {
	var errs []error
	ctx.EachHeader(func(name, value string) {
		if strings.EqualFold(name, "Idempotency-Key") && value == "" && len(errs) == 0 {
			errs = append(errs, &huma.ErrorDetail{Location: "header.Idempotency-Key",
				Message: "empty: send a key of 1 to 255 visible ASCII characters, or no Idempotency-Key header"})
		}
	})
	return errs
}

type startRunOutput struct {
	Status int
	Body   struct {
		InputID string `json:"input_id" doc:"The durable input that started it."`
		Run     *Run   `json:"run,omitempty" doc:"The run, once its thread is posted (absent with 202: look it up later with GET /v1/runs?channel=)."`
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

// startRun submits "/threadwright start <workflow>" in the channel as the token,
// with the inputs, and waits for the thread and its run.
func (s *Server) startRun(ctx context.Context, in *startRunInput) (*startRunOutput, error) {
	b := in.Body
	if err := mayChannel(ctx, b.Channel); err != nil {
		return nil, err
	}
	def, ok := s.cfg.Workflows.Get(b.Workflow)
	if !ok {
		return nil, huma.Error422UnprocessableEntity("no workflow "+b.Workflow, &huma.ErrorDetail{
			Location: "body.workflow", Value: b.Workflow, Message: "one of: " + strings.Join(s.cfg.Workflows.Names(), ", ")})
	}
	if problems := inputProblems(def, b.Inputs); len(problems) > 0 {
		return nil, huma.Error422UnprocessableEntity("invalid inputs for workflow "+def.Name, problems...)
	}
	team := b.TeamID
	if team == "" {
		team = s.cfg.TeamID
	}
	tok := actor(ctx)
	inputID := newInputID()
	if in.IdempotencyKey != "" {
		inputID = keyedInputID(tok.Name, in.IdempotencyKey)
	}
	cmd := conversation.Input{ID: inputID, Key: conversation.Key{TeamID: team, ChannelID: b.Channel}, Kind: conversation.KindCommand,
		Command: &conversation.CommandInput{Source: conversation.SourceAPI, UserID: tok.Actor(), Line: "start " + def.Name, Inputs: b.Inputs}}
	prior, err := s.keptStart(ctx, cmd)
	if err == nil && prior == nil {
		prior, err = s.submit(ctx, cmd)
	}
	if err != nil {
		return nil, err
	}
	msg := "api: run requested"
	if prior != nil {
		if !sameStart(*prior, cmd) {
			return nil, keyReused(in.IdempotencyKey, *prior)
		}
		msg = "api: run requested again with its Idempotency-Key: the first request's input answers"
	}
	s.log.Info(msg, "token", tok.Name, "workflow", def.Name, "channel", b.Channel, "input_id", inputID)
	out := &startRunOutput{Status: http.StatusAccepted}
	out.Body.InputID = inputID
	run, failed, err := s.awaitRun(ctx, inputID, def)
	if err != nil {
		// The input is kept, and runs in its turn: the store's failure to tell what
		// came of it yet is no reason to answer an error, which a client would retry.
		s.log.Warn("api: run requested, its thread not read", "input_id", inputID, "error", err)
		return out, nil
	}
	if failed != "" {
		s.log.Warn("api: run not started", "token", tok.Name, "workflow", def.Name, "channel", b.Channel, "input_id", inputID, "status", failed)
		return nil, huma.Error502BadGateway(fmt.Sprintf("the bot could not start %s in %s: Slack refused the thread's root message "+
			"(is the bot in the channel?); the log of input %s says why; once that is fixed, start it again (with a new Idempotency-Key)", def.Name, b.Channel, inputID))
	}
	if run != nil && prior == nil && in.IdempotencyKey != "" {
		// Taken though its key was used before: spooled, or retried in a batch,
		// while the store could not be asked. The run found is the first request's.
		kept, err := s.input(ctx, inputID)
		switch {
		case err == nil && !sameStart(kept, cmd):
			return nil, keyReused(in.IdempotencyKey, kept)
		case err != nil && (run.Workflow != def.Name || run.ChannelID != b.Channel):
			run = nil // another start's run, it seems; the store cannot say: 202
		}
	}
	if run != nil {
		out.Status, out.Body.Run = http.StatusCreated, run
	}
	return out, nil
}

// keyReused is the 422 of an Idempotency-Key that this token sent before for prior,
// another start.
func keyReused(key string, prior conversation.Input) error {
	return huma.Error422UnprocessableEntity("Idempotency-Key reused for another request", &huma.ErrorDetail{
		Location: "header.Idempotency-Key", Value: key,
		Message: fmt.Sprintf("this token sent this key before to start %s (input %s); send a new key to start another run", startOf(prior), prior.ID)})
}

// keptStart returns the input kept already under start's Idempotency-Key, nil when
// there is none or start has no key. A store that cannot say is no error: start is
// submitted, and the intake keeps its id once all the same.
func (s *Server) keptStart(ctx context.Context, start conversation.Input) (*conversation.Input, error) {
	if !strings.HasPrefix(start.ID, keyedPrefix) {
		return nil, nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	prior, err := s.input(ctx, start.ID)
	switch {
	case err == nil:
		return &prior, nil
	case !errors.Is(err, conversation.ErrNotFound):
		s.log.Warn("api: a keyed start not looked up before it is submitted", "input_id", start.ID, "error", err)
	}
	return nil, nil
}

// input is Store.Input, with an input whose payload does not decode given without
// it and no error: its status is right, and it matches no start (sameStart).
func (s *Server) input(ctx context.Context, id string) (conversation.Input, error) {
	in, err := s.cfg.Store.Input(ctx, id)
	if ue := (*conversation.UndecodableError)(nil); errors.As(err, &ue) {
		return ue.Input, nil
	}
	return in, err
}

// inputProblems checks inputs, a run's inputs by id, against def: each must be an
// input of def, hold no NUL and at most maxInputChars characters, and pass the inputs
// modal's check; every required input of def must be given. It returns one
// *huma.ErrorDetail per problem, the given inputs' by id, then the missing ones.
func inputProblems(def *workflow.Definition, inputs map[string]string) []error {
	var problems []error
	ids := make([]string, 0, len(inputs))
	for id := range inputs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		wi, ok := def.Input(id)
		switch {
		case !ok:
			problems = append(problems, &huma.ErrorDetail{Location: "body.inputs." + id, Value: id, Message: "the workflow has no such input"})
		case strings.ContainsRune(inputs[id], 0):
			problems = append(problems, &huma.ErrorDetail{Location: "body.inputs." + id, Message: "contains a NUL character"})
		case utf8.RuneCountInString(inputs[id]) > maxInputChars:
			problems = append(problems, &huma.ErrorDetail{Location: "body.inputs." + id,
				Message: fmt.Sprintf("longer than %d characters", maxInputChars)})
		default:
			// The inputs modal's own check (a number input holds a number).
			f := conversation.Field{ID: id, Label: wi.Name(), Number: wi.Type == workflow.InputNumber}
			if msg := render.FieldError("en", f, inputs[id]); msg != "" {
				problems = append(problems, &huma.ErrorDetail{Location: "body.inputs." + id, Value: inputs[id], Message: msg})
			}
		}
	}
	for _, m := range def.MissingInputs(mergeInputs(def.FillInputs(""), inputs)) {
		problems = append(problems, &huma.ErrorDetail{Location: "body.inputs." + m.ID, Message: "required: " + m.Name()})
	}
	return problems
}

// awaitRun polls until the start command inputID of def has forwarded to its thread
// and the thread's run is saved, and returns the run; or, when the command ended
// without a forward (failed or dropped), its status as failed. It returns no run and
// no status when the poll ends first. Errors: the store's, which end the poll.
func (s *Server) awaitRun(ctx context.Context, inputID string, def *workflow.Definition) (run *Run, failed conversation.InputStatus, err error) {
	err = s.poll(ctx, func(ctx context.Context) (bool, error) {
		keys, err := s.cfg.Store.Forwarded(ctx, inputID)
		if err != nil {
			return false, err
		}
		if len(keys) == 0 {
			// A command that ended without a forward posted no thread (Slack
			// refused the root message: the bot is not in the channel, …).
			in, err := s.input(ctx, inputID)
			if err == nil && (in.Status == conversation.InputFailed || in.Status == conversation.InputDropped) {
				failed = in.Status
				return true, nil
			}
			return false, nil
		}
		key := keys[0]
		cp, err := s.cfg.Store.Load(ctx, key, 0)
		switch {
		case errors.Is(err, conversation.ErrNotFound):
			return false, nil // its first turn has not saved yet
		case err != nil:
			return false, err
		case cp.Conversation.State.Workflow == nil:
			return false, nil
		}
		run, err = s.run(ctx, key, cp, def)
		return err == nil, err
	})
	return run, failed, err
}

// maxInputChars bounds an input's value, as the inputs modal's fields do (Slack's
// plain_text_input max_length, bot's maxInputChars): every prompt of the run
// holds it.
const maxInputChars = 3000

func mergeInputs(a, b map[string]string) map[string]string {
	for k, v := range b {
		a[k] = v
	}
	return a
}

// newInputID returns the id of an input of the API: "api:" and 16 random hex digits.
func newInputID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "api:" + hex.EncodeToString(b[:])
}

// keyedPrefix begins the id of a start sent with an Idempotency-Key (keyedInputID).
const keyedPrefix = "api:key:"

// keyedInputID returns the id of the start that token sends with Idempotency-Key
// key: keyedPrefix and the first 32 hex digits of the SHA-256 of the two, so that a
// repeat is the same input (the store keeps an input id once) and another token's
// key is another input.
func keyedInputID(token, key string) string {
	sum := sha256.Sum256([]byte(token + "\x00" + key))
	return keyedPrefix + hex.EncodeToString(sum[:16])
}

// sameStart reports whether prior, the input kept under a start's Idempotency-Key,
// asks for what start asks: the same workspace, channel, workflow, token and inputs.
func sameStart(prior, start conversation.Input) bool {
	p, c := prior.Command, start.Command
	return prior.Kind == start.Kind && prior.Key == start.Key && p != nil &&
		p.Line == c.Line && p.UserID == c.UserID && maps.Equal(p.Inputs, c.Inputs)
}

// startOf describes what a kept start asked for, for the 422 of a key reused.
func startOf(in conversation.Input) string {
	if c := in.Command; c != nil {
		return fmt.Sprintf("%q in %s with %d input(s)", strings.TrimPrefix(c.Line, "start "), in.Key.ChannelID, len(c.Inputs))
	}
	return "something else"
}

// submit submits in, within Config.StoreTimeout. For an input with an
// Idempotency-Key (keyedPrefix) that the store holds already, it returns that input
// as prior, for the caller to compare: the request is a repeat. Errors: 503 when
// it was not confirmed kept in time (the store is down or hangs and nothing could
// spool it, the service shuts down; the store may still take it), or when a keyed
// input not taken could not be looked up; 429 when a limit refused it.
func (s *Server) submit(ctx context.Context, in conversation.Input) (prior *conversation.Input, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	keyed := strings.HasPrefix(in.ID, keyedPrefix)
	accepted, err := s.cfg.Submitter.Submit(ctx, in)
	switch {
	case err != nil:
		s.log.Warn("api: input not kept", "input_id", in.ID, "error", err)
		// The store may still take it (a transaction that ends after the deadline, a
		// commit whose answer was lost): it then runs as any other.
		if keyed {
			return nil, huma.Error503ServiceUnavailable("the request could not be confirmed stored in time (input " + in.ID +
				"); it may still take effect: send it again with the same Idempotency-Key, which starts at most one run")
		}
		return nil, huma.Error503ServiceUnavailable("the request could not be confirmed stored in time (input " + in.ID +
			"); it may still take effect: look at the run or its thread before you try again")
	case accepted:
		return nil, nil
	case keyed:
		// Not taken: a repeat of a kept input (the intake takes an id once), or a
		// refusal of the flood limits. The store tells which.
		got, err := s.input(ctx, in.ID)
		switch {
		case err == nil:
			return &got, nil
		case !errors.Is(err, conversation.ErrNotFound):
			s.log.Warn("api: a keyed input not taken, not looked up", "input_id", in.ID, "error", err)
			return nil, huma.Error503ServiceUnavailable("the store did not say whether input " + in.ID +
				" was kept before; send the request again with the same Idempotency-Key")
		}
		// Not in the store: refused, or spooled a moment ago while the store was
		// down and not yet moved into it (the same key then answers as a repeat).
		return nil, huma.Error429TooManyRequests("refused by the flood limits, or kept a moment ago and not stored yet; " +
			"try again later with the same Idempotency-Key")
	}
	return nil, huma.Error429TooManyRequests("refused by the flood limits; try again later")
}

// poll calls done every 100 ms until it reports true, or Config.Wait (or ctx) ends.
// A call that fails is tried again after a backoff (100 ms, doubling to 5 s), so
// that a store failing for a moment does not end the wait. The end of the wait is
// not an error: poll returns the last call's error when that call failed, nil
// otherwise.
func (s *Server) poll(ctx context.Context, done func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Wait)
	defer cancel()
	retry := backoff.NewExponentialBackOff(backoff.WithInitialInterval(100*time.Millisecond), backoff.WithMaxInterval(5*time.Second),
		backoff.WithMaxElapsedTime(0))
	var last error
	for {
		ok, err := done(ctx)
		switch {
		case ok:
			return nil
		case ctx.Err() != nil:
			return last // the wait ended during the call
		}
		last = err
		wait := 100 * time.Millisecond
		if err != nil {
			wait = retry.NextBackOff()
		} else {
			retry.Reset()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return last
		case <-t.C:
		}
	}
}
