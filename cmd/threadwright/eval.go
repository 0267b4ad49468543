package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/eval"
	"github.com/threadwright/threadwright/eval/cassette"
	"github.com/threadwright/threadwright/eval/evalset"
	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/store"
)

const evalUsage = `Usage:
  threadwright eval [flags] [PATH...]   run eval cases (YAML files, or directories of them; default:
                                        the shipped set) through the real pipeline, with an emulated
                                        Slack and a throwaway store per run (docs/eval.md)
  threadwright eval --compare OLD.json NEW.json
                                        show what changed between two reports; exits non-zero when
                                        a case regressed

Flags:
  --repeat N            runs per case (default 1); --pass-rate F: the share that must pass
                        (default 1)
  --concurrency N       runs at once (default 2); --timeout D: bound of one run (default 10m)
  --run REGEXP          only the cases whose name matches
  --demo                the offline demo model instead of the configured one (OPENAI_*)
  --record FILE         keep every model request and response in a cassette
  --replay FILE         answer from a cassette, calling no model; a request it lacks is drift
  --knowledge configured
                        search the configured store's knowledge base instead of each run's own
  --rubric PROFILE      judge rubrics with the MODEL_PROFILES profile PROFILE (off by default)
  --rubric-max-cost USD bound of the rubric judge's cost, priced by MODEL_PRICES (default 1)
  --json FILE           write the JSON report; --junit FILE: write JUnit XML
  --list                list the cases and exit

It exits non-zero when a case did not pass.
`

// evalFlags are the flags of threadwright eval.
type evalFlags struct {
	repeat, concurrency  int
	passRate, maxCost    float64
	timeout              time.Duration
	only, record, replay string
	knowledge, rubric    string
	jsonOut, junitOut    string
	demo, list, compare  bool
}

// runEval runs "threadwright eval ARGS" (args are what follows "eval").
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f evalFlags
	fs := flag.NewFlagSet("eval", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.IntVar(&f.repeat, "repeat", 1, "")
	fs.IntVar(&f.concurrency, "concurrency", eval.DefaultConcurrency, "")
	fs.Float64Var(&f.passRate, "pass-rate", 1, "")
	fs.Float64Var(&f.maxCost, "rubric-max-cost", 1, "")
	fs.DurationVar(&f.timeout, "timeout", eval.DefaultTimeout, "")
	fs.StringVar(&f.only, "run", "", "")
	fs.StringVar(&f.record, "record", "", "")
	fs.StringVar(&f.replay, "replay", "", "")
	fs.StringVar(&f.knowledge, "knowledge", "", "")
	fs.StringVar(&f.rubric, "rubric", "", "")
	fs.StringVar(&f.jsonOut, "json", "", "")
	fs.StringVar(&f.junitOut, "junit", "", "")
	fs.BoolVar(&f.demo, "demo", false, "")
	fs.BoolVar(&f.list, "list", false, "")
	fs.BoolVar(&f.compare, "compare", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, evalUsage)
			return nil
		}
		fmt.Fprint(stderr, evalUsage)
		return fmt.Errorf("eval: %w", err)
	}
	if f.compare {
		return compareReports(fs.Args(), stdout)
	}
	if err := f.check(); err != nil {
		fmt.Fprint(stderr, evalUsage)
		return err
	}
	cases, err := loadCases(fs.Args(), f.only)
	if err != nil {
		return err
	}
	if f.list {
		for _, c := range cases {
			fmt.Fprintf(stdout, "%s\t%s\t%s\n", c.Name, c.Path, c.Description)
		}
		return nil
	}
	r, closeAll, err := newEvalRunner(ctx, f, stderr)
	if err != nil {
		return err
	}
	defer closeAll()
	r.Progress = eval.NewProgress(stderr).Update
	rep, err := r.Run(ctx, cases)
	if r.Record != nil { // what was recorded, even of runs that failed
		if serr := r.Record.Save(f.record); serr != nil {
			return errors.Join(err, serr)
		}
	}
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return f.finish(rep, stdout)
}

// check checks the flags that go together.
func (f *evalFlags) check() error {
	switch {
	case f.repeat < 1 || f.concurrency < 1:
		return errors.New("eval: --repeat and --concurrency are whole numbers above 0")
	case f.passRate <= 0 || f.passRate > 1:
		return errors.New("eval: --pass-rate is a share above 0 and at most 1, such as 0.8")
	case f.record != "" && f.replay != "":
		return errors.New("eval: --record and --replay go alone")
	case f.demo && f.replay != "":
		return errors.New("eval: --replay answers from the cassette; --demo would not be used")
	case f.knowledge != "" && f.knowledge != "configured":
		return fmt.Errorf("eval: --knowledge %q: the only value is configured", f.knowledge)
	case f.maxCost < 0:
		return errors.New("eval: --rubric-max-cost is not negative")
	}
	return nil
}

// loadCases reads the cases of paths (the shipped set without paths) whose names
// match the regular expression only ("": all).
func loadCases(paths []string, only string) ([]*eval.Case, error) {
	var cases []*eval.Case
	var err error
	if len(paths) == 0 {
		cases, err = eval.LoadFS(evalset.FS, ".", "builtin")
	} else {
		cases, err = eval.Load(paths...)
	}
	if err != nil || only == "" {
		return cases, err
	}
	re, err := regexp.Compile(only)
	if err != nil {
		return nil, fmt.Errorf("eval: --run: %w", err)
	}
	var out []*eval.Case
	for _, c := range cases {
		if re.MatchString(c.Name) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("eval: --run %q matches no case", only)
	}
	return out, nil
}

// newEvalRunner makes the runner of f: the launcher on the configuration, and the
// cassette, the rubric judge and the shared knowledge base that f asks for. closeAll
// closes what it opened.
func newEvalRunner(ctx context.Context, f evalFlags, stderr io.Writer) (_ *eval.Runner, _ func(), err error) {
	var base Config
	if err := envconfig.Process("", &base); err != nil {
		return nil, nil, configError(err)
	}
	l := &evalLauncher{demo: f.demo}
	r := &eval.Runner{Launcher: l, Repeat: f.repeat, PassRate: f.passRate, Concurrency: f.concurrency, Timeout: f.timeout}
	var closers []func()
	closeOpened := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeOpened()
		}
	}()
	var uc usageConfig
	if err := envconfig.Process("", &uc); err != nil {
		return nil, nil, configError(err)
	}
	if r.Prices, err = conversation.LoadPrices(uc.ModelPrices); err != nil {
		return nil, nil, err
	}
	if r.Redact, err = evalRedactor(&base); err != nil {
		return nil, nil, err
	}
	r.Model = eval.ModelInfo{Mode: "live", Model: base.OpenAIModel, SmallModel: base.OpenAISmallModel}
	switch {
	case f.demo:
		r.Model = eval.ModelInfo{Mode: "demo", Model: demo.ModelName}
	case f.replay != "":
		c, err := cassette.Open(f.replay)
		if err != nil {
			return nil, nil, err
		}
		r.Replay = cassette.NewPlayer(c)
		l.models = [2]string{c.Model, c.SmallModel}
		r.Model = eval.ModelInfo{Mode: "replay", Model: c.Model, SmallModel: c.SmallModel}
	case os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == "":
		return nil, nil, errors.New("eval: no model: set OPENAI_API_KEY (or OPENAI_BASE_URL), or use --demo or --replay FILE")
	}
	if f.record != "" {
		r.Record = cassette.NewRecorder(r.Model.Model, cmp.Or(r.Model.SmallModel, r.Model.Model))
		r.Model.Mode = "record"
	}
	if f.knowledge == "configured" {
		st, err := store.Open(ctx, store.Options{DatabaseURL: base.DatabaseURL, DataDir: base.DataDir, Logger: base.logger(stderr)})
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, func() { _ = st.Close() })
		kb, ok := st.(conversation.Knowledge)
		if !ok {
			return nil, nil, fmt.Errorf("eval: --knowledge configured: the store (%T) has no knowledge base", st)
		}
		l.knowledge = kb
	}
	if f.rubric != "" {
		if r.Rubric, err = rubricJudge(&base, f.rubric, f.maxCost, r.Prices); err != nil {
			return nil, nil, err
		}
		r.Model.Rubric = r.Rubric.ModelName
	}
	return r, closeOpened, nil
}

// evalRedactor returns what scrubs the configured secrets (Config.redactor) from the
// report.
func evalRedactor(c *Config) (func(string) string, error) {
	var mcpCfg mcp.Config
	if c.MCPConfig != "" {
		var err error
		if mcpCfg, err = mcp.LoadConfig(c.MCPConfig); err != nil {
			return nil, fmt.Errorf("MCP_CONFIG: %w", err)
		}
	}
	profiles, err := LoadProfiles(c.ModelProfiles, c)
	if err != nil {
		return nil, err
	}
	return c.redactor(mcpCfg, profiles).String, nil
}

// rubricJudge makes the rubric judge on the MODEL_PROFILES profile name.
func rubricJudge(base *Config, name string, maxCost float64, prices conversation.Prices) (*eval.RubricJudge, error) {
	profiles, err := LoadProfiles(base.ModelProfiles, base)
	if err != nil {
		return nil, err
	}
	p, ok := profiles[name]
	if !ok {
		return nil, fmt.Errorf("eval: --rubric %s: MODEL_PROFILES defines no such profile", name)
	}
	if _, priced := prices[p.Model]; maxCost > 0 && !priced {
		return nil, fmt.Errorf("eval: --rubric %s: MODEL_PRICES has no price for %s, which --rubric-max-cost needs (or set it to 0: no bound)", name, p.Model)
	}
	client := modelProfiles(map[string]ModelProfile{name: p}, base.clientConfig(base.logger(io.Discard)), nil)[name]
	return &eval.RubricJudge{Model: client.Client, ModelName: p.Model, Prices: prices, MaxCost: maxCost}, nil
}

// finish writes the report's table and files, and fails when a case did not pass.
func (f *evalFlags) finish(rep *eval.Report, stdout io.Writer) error {
	if err := eval.WriteTable(stdout, rep); err != nil {
		return err
	}
	if err := rep.Save(f.jsonOut, f.junitOut); err != nil {
		return err
	}
	if !rep.Passed() {
		return fmt.Errorf("eval: %d of %d cases did not pass", rep.Summary.Cases-rep.Summary.Passed, rep.Summary.Cases)
	}
	return nil
}

// compareReports runs threadwright eval --compare OLD NEW.
func compareReports(paths []string, stdout io.Writer) error {
	if len(paths) != 2 {
		return errors.New("eval: --compare takes two reports, OLD.json NEW.json")
	}
	c, err := eval.CompareFiles(paths[0], paths[1])
	if err != nil {
		return err
	}
	if err := c.Write(stdout); err != nil {
		return err
	}
	if c.Regressions > 0 {
		return fmt.Errorf("eval: %d cases regressed", c.Regressions)
	}
	return nil
}

// evalLauncher starts Main for each run of threadwright eval (eval.Launcher): the
// configuration from the environment with the case's settings over it, connected to
// the run's emulated Slack, on a store in the run's directory.
type evalLauncher struct {
	// demo runs the offline demo model (and its canned pages for fetch artifacts).
	demo bool
	// models, when set, are the OPENAI_MODEL and OPENAI_SMALL_MODEL of a replayed
	// cassette.
	models [2]string
	// knowledge, when set, is the shared knowledge base search_knowledge searches.
	knowledge conversation.Knowledge
	// fetcher, when set, reads the pages of fetch artifacts (tests: the demo's).
	fetcher conversation.SourceFetcher
	n       atomic.Int64
}

// config returns the configuration of run s: the environment's with s.Settings over
// it (read by envconfig under a prefix of the run's own, so that runs do not see each
// other's settings), Slack and the store set to the run's, and what reaches out of
// the process (HTTP_ADDR, API_ADDR, webhooks, traces) off.
func (l *evalLauncher) config(s eval.Launch) (*Config, error) {
	prefix := fmt.Sprintf("THREADWRIGHT_EVAL_%d", l.n.Add(1))
	for k, v := range s.Settings {
		if err := os.Setenv(prefix+"_"+k, v); err != nil {
			return nil, err
		}
		defer os.Unsetenv(prefix + "_" + k)
	}
	unprefixed := func(err error) error {
		return fmt.Errorf("settings: %s", strings.ReplaceAll(err.Error(), prefix+"_", ""))
	}
	c := new(Config)
	if err := envconfig.CheckDisallowed(prefix, c); err != nil {
		return nil, fmt.Errorf("%w (docs/configuration.md lists the settings)", unprefixed(err))
	}
	if err := envconfig.Process(prefix, c); err != nil {
		return nil, unprefixed(configError(err))
	}
	c.SlackBotToken, c.SlackAppToken, c.SlackAPIURL = s.BotToken, s.AppToken, s.SlackURL
	c.DatabaseURL, c.DataDir = "", filepath.Join(s.Dir, "data")
	c.HTTPAddr, c.APIAddr, c.WebhookURLs, c.TraceConfig = "", "", nil, TraceConfig{TraceContent: "false"}
	c.RetentionDays, c.ShutdownTimeout = 0, 10*time.Second
	switch { // the endpoint is never called: the demo model, or the cassette, answers
	case l.demo:
		c.OpenAIAPIKey, c.OpenAIBaseURL, c.OpenAIModel, c.OpenAISmallModel = "demo", agents.DefaultBaseURL, demo.ModelName, demo.ModelName
	case l.models[0] != "":
		c.OpenAIAPIKey, c.OpenAIBaseURL, c.OpenAIModel, c.OpenAISmallModel = "cassette", agents.DefaultBaseURL, l.models[0], l.models[1]
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	return c, nil
}

// Launch starts Main for run s and waits until it is ready.
func (l *evalLauncher) Launch(ctx context.Context, s eval.Launch) (eval.Bot, error) {
	c, err := l.config(s)
	if err != nil {
		return nil, err
	}
	m := NewMain()
	m.Config = *c
	m.Stdout, m.Stderr, m.Logger = io.Discard, io.Discard, s.Logger
	m.noMetrics = true
	m.RegisterTools = s.RegisterTools
	m.Hooks = Hooks{Model: s.Model, Tool: s.Tool, Scope: s.Scope, Knowledge: l.knowledge}
	m.Fetcher = l.fetcher
	if l.demo {
		m.Model = demo.New()
		m.Fetcher = demo.SourceFetcher{}
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b := &evalBot{m: m, cancel: cancel, done: make(chan error, 1), own: l.knowledge == nil}
	go func() { b.done <- m.Run(rctx) }()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for !m.Ready(ctx) {
		select {
		case err := <-b.done:
			cancel()
			return nil, err
		case <-ctx.Done():
			return nil, errors.Join(ctx.Err(), b.Stop())
		case <-t.C:
		}
	}
	return b, nil
}

// evalBot is a Main that runs for one run of threadwright eval (eval.Bot).
type evalBot struct {
	m      *Main
	cancel context.CancelFunc
	done   chan error
	own    bool // the knowledge base is the run's store's
}

func (b *evalBot) Store() conversation.Store {
	st, _ := b.m.store.Load().(conversation.Store)
	return st
}

func (b *evalBot) Knowledge() conversation.Knowledge {
	kb, _ := b.Store().(conversation.Knowledge)
	if !b.own || kb == nil {
		return nil
	}
	return kb
}

func (b *evalBot) Idle(ctx context.Context) error { return b.m.Wait(ctx) }

func (b *evalBot) Stop() error {
	b.cancel()
	err := <-b.done
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
