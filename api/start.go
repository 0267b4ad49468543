package api

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/danielgtaylor/huma/v2"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// The start of a run by the API (POST /v1/runs; docs/api.md, "Starting a run
// safely").

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
	prior := s.keptStart(ctx, cmd)
	if prior == nil {
		var err error
		if prior, err = s.submit(ctx, cmd); err != nil {
			return nil, err
		}
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
			"(is the bot in the channel?); the log of input %s says why; once that is fixed, start it again (with a new Idempotency-Key, if you sent one)", def.Name, b.Channel, inputID))
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
// there is none or start has no key. A store that cannot say answers nil (logged):
// start is submitted, and the intake keeps its id once all the same.
func (s *Server) keptStart(ctx context.Context, start conversation.Input) *conversation.Input {
	if !strings.HasPrefix(start.ID, keyedPrefix) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	prior, err := s.input(ctx, start.ID)
	switch {
	case err == nil:
		return &prior
	case !errors.Is(err, conversation.ErrNotFound):
		s.log.Warn("api: a keyed start not looked up before it is submitted", "input_id", start.ID, "error", err)
	}
	return nil
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
// no status when the poll ends first. Errors: the last read's, when it failed as the
// wait (Config.Wait) ended; a read that fails before is tried again (poll).
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
