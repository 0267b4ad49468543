package eval

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/eval/cassette"
	"github.com/threadwright/threadwright/knowledge"
	"github.com/threadwright/threadwright/playground/emulator"
)

// Defaults of Runner.
const (
	DefaultConcurrency = 2
	DefaultTimeout     = 10 * time.Minute
)

// Runner runs eval cases through the real pipeline (docs/eval.md): for each run, an
// emulated Slack of its own (playground/emulator), the bot started by Launcher on a
// throwaway store, the case's documents loaded, its steps taken as people would,
// and the expectations judged on what the run did.
type Runner struct {
	// Launcher starts the bot of each run. Required.
	Launcher Launcher
	// Repeat is how many times each case runs (default 1); PassRate the share of a
	// case's runs that must pass for the case to pass (default 1: all).
	Repeat   int
	PassRate float64
	// Concurrency bounds the runs at once (default DefaultConcurrency).
	Concurrency int
	// Timeout bounds one run, unless its case sets its own (default
	// DefaultTimeout).
	Timeout time.Duration
	// Prices price the model calls (MODEL_PRICES).
	Prices conversation.Prices
	// Record, when set, records every model call into a cassette; Replay, when set,
	// answers them from one instead of the model.
	Record *cassette.Recorder
	Replay *cassette.Player
	// Rubric, when set, grades the runs of cases with a rubric.
	Rubric *RubricJudge
	// WorkDir holds the runs' directories (default os.TempDir()).
	WorkDir string
	// Progress, when set, is told of each run as it ends, with the runs done and
	// the runs in all.
	Progress func(done, total int, c *Case, r RunResult)
	// Model describes the model for the report.
	Model ModelInfo
	// Redact, when set, scrubs the configured secrets from what the report keeps of
	// a run: its transcript, checks, error and log.
	Redact func(string) string
}

// Run runs every case Repeat times, at most Concurrency runs at once, and returns
// the report. A run that fails is part of the report; the error is ctx's.
func (r *Runner) Run(ctx context.Context, cases []*Case) (*Report, error) {
	if r.Launcher == nil {
		return nil, errors.New("eval: a Runner needs a Launcher")
	}
	repeat := max(r.Repeat, 1)
	rep := &Report{Version: ReportVersion, Started: time.Now().UTC().Truncate(time.Millisecond), Model: r.Model, Repeat: repeat}
	rep.Cases = make([]CaseResult, len(cases))
	for i, c := range cases {
		rep.Cases[i] = CaseResult{Name: c.Name, File: c.Path, Description: c.Description, Tags: c.Tags, Runs: make([]RunResult, repeat)}
	}
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(cmp.Or(r.Concurrency, DefaultConcurrency))
	var mu sync.Mutex
	done, total := 0, len(cases)*repeat
	for run := 1; run <= repeat; run++ {
		for i, c := range cases {
			g.Go(func() error {
				res := r.runCase(gctx, c, run)
				if r.Redact != nil {
					res.redact(r.Redact)
				}
				mu.Lock()
				defer mu.Unlock()
				rep.Cases[i].Runs[run-1] = res
				done++
				if r.Progress != nil {
					r.Progress(done, total, c, res)
				}
				return nil
			})
		}
	}
	_ = g.Wait()
	rep.WallMS = time.Since(start).Milliseconds()
	rep.summarize(cmp.Or(r.PassRate, 1))
	return rep, ctx.Err()
}

// runCase runs c once (its run number run) and judges it.
func (r *Runner) runCase(ctx context.Context, c *Case, run int) (res RunResult) {
	start := time.Now()
	res.Run = run
	logs := &logBuffer{max: 40}
	defer func() {
		res.WallMS = time.Since(start).Milliseconds()
		if res.Status != StatusPass {
			res.Log = logs.lines()
		}
	}()
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(time.Duration(c.Timeout), r.Timeout, DefaultTimeout))
	defer cancel()
	tr, retrieval, t, err := r.drive(ctx, c, run, logs)
	calls, _, _, drift := t.snapshot()
	res.Usage = usageOf(calls, r.Prices)
	if tr != nil {
		res.Transcript = tr
		for _, s := range tr.Steps {
			res.LatencyMS = max(res.LatencyMS, s.LatencyMS)
		}
	}
	switch {
	case len(drift) > 0:
		res.Status, res.Error = StatusDrift, drift[0]
		return res
	case err != nil:
		res.Status, res.Error = StatusError, err.Error()
		return res
	}
	res.Checks = judge(c, tr, res.Usage)
	if retrieval != nil {
		res.Retrieval = retrieval
		if ch, ok := retrieval.check(c.Retrieval); ok {
			res.Checks = append(res.Checks, ch)
		}
	}
	if r.Rubric != nil && c.Rubric != "" {
		res.Rubric = r.Rubric.judge(ctx, r.model(c.Name+"#rubric", run, r.Rubric.Model), c.Rubric, c, tr)
	}
	res.Status = StatusPass
	if len(res.Failed()) > 0 {
		res.Status = StatusFail
	}
	return res
}

// drive starts the run's emulated Slack and bot, loads the case's documents, takes
// its steps, observes what happened and scores its retrieval questions. The
// transcript is returned with the error of a step that could not be taken, as far as
// it got.
func (r *Runner) drive(ctx context.Context, c *Case, run int, logs *logBuffer) (_ *Transcript, _ *RetrievalScore, _ *tap, err error) {
	t := &tap{}
	dir, err := os.MkdirTemp(r.WorkDir, "eval-")
	if err != nil {
		return nil, nil, t, fmt.Errorf("eval: %w", err)
	}
	defer os.RemoveAll(dir)
	settings, err := writeFiles(dir, c)
	if err != nil {
		return nil, nil, t, err
	}
	emu, err := emulator.NewServer(emulator.Config{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		return nil, nil, t, fmt.Errorf("eval: start the emulated Slack: %w", err)
	}
	defer emu.Close()
	ec := emu.Config()
	bot, err := r.Launcher.Launch(ctx, Launch{
		Case: c.Name, Run: run, SlackURL: emu.URL(), BotToken: ec.BotToken, AppToken: ec.AppToken,
		Dir: dir, Settings: settings, Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Model: func(inner agents.Completer) agents.Completer { return t.model(r.model(c.Name, run, inner)) },
		Tool:  t.tool, Scope: t.scopeCheck, RegisterTools: registerStubs(c.Tools),
	})
	if err != nil {
		return nil, nil, t, fmt.Errorf("eval: start the bot: %w", err)
	}
	defer func() {
		if serr := bot.Stop(); serr != nil && err == nil {
			err = fmt.Errorf("eval: the bot stopped with an error: %w", serr)
		}
	}()
	if err := loadDocuments(ctx, bot.Knowledge(), c.Knowledge); err != nil {
		return nil, nil, t, err
	}
	d := &driver{emu: emu, bot: bot, tap: t, team: ec.TeamID, botUser: ec.BotUserID, channel: channelIDs[c.Channel]}
	derr := d.run(ctx, c.Thread)
	tr, oerr := observe(ctx, d, c.Thread)
	if err := errors.Join(derr, oerr); err != nil || c.Retrieval == nil {
		return tr, nil, t, err
	}
	score, err := scoreRetrieval(ctx, t.searchTool(), c.Retrieval)
	return tr, score, t, err
}

// model is the model client of run run of the case name: the cassette's player on
// a replay (never inner), inner recorded on a recording, else inner.
func (r *Runner) model(name string, run int, inner agents.Completer) agents.Completer {
	switch {
	case r.Replay != nil:
		return r.Replay.Model(name, run)
	case r.Record != nil:
		return r.Record.Model(name, run, inner)
	}
	return inner
}

// writeFiles writes c's files into the run's directory dir and returns c's settings
// with "${FILES}" expanded to the files' directory.
func writeFiles(dir string, c *Case) (map[string]string, error) {
	files := filepath.Join(dir, "files")
	for name, content := range c.Files {
		p := filepath.Join(files, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return nil, fmt.Errorf("eval: files: %w", err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			return nil, fmt.Errorf("eval: files: %w", err)
		}
	}
	out := make(map[string]string, len(c.Settings))
	for k, v := range c.Settings {
		out[k] = strings.ReplaceAll(v, "${FILES}", files)
	}
	return out, nil
}

// loadDocuments stores docs in kb, as `threadwright ingest` would (knowledge.Chunks).
func loadDocuments(ctx context.Context, kb conversation.Knowledge, docs []Document) error {
	if len(docs) == 0 {
		return nil
	}
	if kb == nil {
		return errors.New("eval: the case has knowledge documents, but the run has no knowledge base of its own to load them into")
	}
	for _, d := range docs {
		chunks, err := knowledge.Chunks(d.Source, []byte(d.Text))
		if err != nil {
			return fmt.Errorf("eval: knowledge %s: %w", d.Source, err)
		}
		sum := sha256.Sum256([]byte(d.Text))
		if _, err := kb.ReplaceSource(ctx, d.Source, hex.EncodeToString(sum[:]), conversation.Origin{}, chunks); err != nil {
			return fmt.Errorf("eval: knowledge %s: %w", d.Source, err)
		}
	}
	return nil
}

// redact scrubs the texts of r with scrub.
func (r *RunResult) redact(scrub func(string) string) {
	r.Error = scrub(r.Error)
	for i := range r.Log {
		r.Log[i] = scrub(r.Log[i])
	}
	for i := range r.Checks {
		r.Checks[i].Detail = scrub(r.Checks[i].Detail)
	}
	tr := r.Transcript
	if tr == nil {
		return
	}
	for i := range tr.Steps {
		tr.Steps[i].Reply, tr.Steps[i].Error = scrub(tr.Steps[i].Reply), scrub(tr.Steps[i].Error)
	}
	for i := range tr.ModelCalls {
		tr.ModelCalls[i].Error = scrub(tr.ModelCalls[i].Error)
	}
	for i := range tr.Tools {
		t := &tr.Tools[i]
		t.Result, t.Error = scrub(t.Result), scrub(t.Error)
		if args := scrub(string(t.Arguments)); args != string(t.Arguments) {
			t.Arguments, _ = json.Marshal(args) // no longer the JSON it was: kept as a string
		}
	}
	for i := range tr.Scope {
		tr.Scope[i].Reason, tr.Scope[i].Error = scrub(tr.Scope[i].Reason), scrub(tr.Scope[i].Error)
	}
}

// logBuffer keeps the last max lines written to it.
type logBuffer struct {
	mu  sync.Mutex
	max int
	buf []string
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		b.buf = append(b.buf, clip(line, 400))
		if len(b.buf) > b.max {
			b.buf = b.buf[1:]
		}
	}
	return len(p), nil
}

func (b *logBuffer) lines() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.buf...)
}
