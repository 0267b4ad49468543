package main

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/planner"
	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/api"
)

// StoreConfig selects the store; it is all that `threadwright migrate` needs.
type StoreConfig struct {
	DatabaseURL      string `envconfig:"DATABASE_URL" desc:"Postgres DSN (postgres://user:pass@host:5432/db?sslmode=disable); unset uses the embedded SQLite file $DATA_DIR/threadwright.db"`
	DataDir          string `envconfig:"DATA_DIR" default:"./data" desc:"directory of the embedded SQLite store, and, with Postgres, of the spool that keeps inputs while the database is unreachable"`
	DatabaseMaxConns int    `envconfig:"DATABASE_MAX_CONNS" desc:"Postgres connections this process opens at most (default: a quarter of MAX_CONCURRENT_TURNS, from 10 to 40)"`
}

// Config is threadwright's configuration, read from the environment with envconfig
// (docs/architecture.md, "Configuration").
type Config struct {
	StoreConfig

	SlackBotToken string `envconfig:"SLACK_BOT_TOKEN" desc:"bot token, xoxb-… (required)"`
	SlackAppToken string `envconfig:"SLACK_APP_TOKEN" desc:"app-level token with connections:write, xapp-… (required)"`
	SlackAPIURL   string `envconfig:"SLACK_API_URL" default:"https://slack.com/api/" desc:"Slack Web API base URL (the emulator's in dev and tests)"`

	OpenAIAPIKey     string        `envconfig:"OPENAI_API_KEY" desc:"API key of the model endpoint (required unless OPENAI_BASE_URL points at a server without keys)"`
	OpenAIBaseURL    string        `envconfig:"OPENAI_BASE_URL" default:"https://api.openai.com/v1" desc:"OpenAI-compatible base URL (Azure OpenAI, vLLM, Ollama, LM Studio…)"`
	OpenAIModel      string        `envconfig:"OPENAI_MODEL" default:"gpt-4o-mini" desc:"main model: executor and answers"`
	OpenAISmallModel string        `envconfig:"OPENAI_SMALL_MODEL" desc:"small model: scope checks (default: OPENAI_MODEL)"`
	ModelTimeout     time.Duration `envconfig:"MODEL_TIMEOUT" default:"60s" desc:"timeout of one model call attempt; calls retry on 429/5xx/timeouts"`

	ModelMaxRetries    int           `envconfig:"MODEL_MAX_RETRIES" default:"5" desc:"retries of a model call after a 5xx, a timeout or a connection error (5: up to 6 attempts; 0: never retry, 429s included); an HTTP 429 does not count: the call waits for its Retry-After"`
	ModelRetryBudget   time.Duration `envconfig:"MODEL_RETRY_BUDGET" default:"60s" desc:"time from a model call's first attempt to the start of its last retry, waits included"`
	ModelMaxConcurrent int           `envconfig:"MODEL_MAX_CONCURRENT" default:"128" desc:"model calls in flight at once per endpoint; a burst of HTTP 429s halves it, successes grow it back"`

	ScopeDescription string   `envconfig:"SCOPE_DESCRIPTION" desc:"what the bot is for; empty lets every request through and skips the scope check"`
	ScopeAllow       []string `envconfig:"SCOPE_ALLOW" desc:"comma-separated regular expressions: a matching request is in scope without a model call"`
	ScopeDeny        []string `envconfig:"SCOPE_DENY" desc:"comma-separated regular expressions: a matching request is refused without a model call"`
	// ScopeClassifyResults classifies tool results without a scope label (README "The
	// tool-result contract").
	ScopeClassifyResults bool `envconfig:"SCOPE_CLASSIFY_RESULTS" desc:"check the tool results that carry no out_of_scope label against SCOPE_DESCRIPTION with the small model, one call per turn, before answering"`

	MaxConcurrentTurns int           `envconfig:"MAX_CONCURRENT_TURNS" default:"100" desc:"turns running at once in this process, across threads (one thread's turns always run one at a time, in order, across replicas); a thread waiting for a slot shows that it is queued"`
	LeaseTTL           time.Duration `envconfig:"LEASE_TTL" default:"10s" desc:"how long a thread's lease lives without renewal: a dead replica's threads are taken over within it plus a fifth (renewed every tenth of it)"`
	MaxSteps           int           `envconfig:"MAX_STEPS" default:"8" desc:"model calls per turn before the executor must answer"`
	ToolTimeout        time.Duration `envconfig:"TOOL_TIMEOUT" default:"30s" desc:"timeout of one tool call"`
	TurnTimeout        time.Duration `envconfig:"TURN_TIMEOUT" default:"5m" desc:"timeout of one whole turn"`
	HistoryMessages    int           `envconfig:"HISTORY_MESSAGES" default:"40" desc:"newest messages of a thread given to the model"`
	HistoryTokens      int           `envconfig:"HISTORY_TOKENS" default:"8000" desc:"estimated tokens of thread history given to the model; older messages are summarized by the small model past it"`
	ShutdownTimeout    time.Duration `envconfig:"SHUTDOWN_TIMEOUT" default:"30s" desc:"how long SIGTERM waits for running turns before cancelling them"`
	RetentionDays      int           `envconfig:"RETENTION_DAYS" default:"0" desc:"delete conversations idle for this many days (0 keeps them)"`

	Strategy         string `envconfig:"STRATEGY" default:"react" desc:"how the assistant works: react (one tool-calling loop), planner (understand, plan dependent tasks, run them in parallel, reflect, answer) or auto (the small model picks per question)"`
	StrategyChannels string `envconfig:"STRATEGY_CHANNELS" desc:"per-channel strategies, e.g. C123:planner,C456:react"`

	ExecutorInstructions         string `envconfig:"EXECUTOR_INSTRUCTIONS" desc:"Markdown or text file added to the executor's and planner's system prompt, e.g. the deployment's workflow patterns (README \"Executor instructions\"); at most 16 KiB"`
	ExecutorInstructionsChannels string `envconfig:"EXECUTOR_INSTRUCTIONS_CHANNELS" desc:"per-channel instruction files used instead of EXECUTOR_INSTRUCTIONS, e.g. C123:/etc/tw/support.md,C456:/etc/tw/eng.md"`

	StreamAnswers    bool `envconfig:"STREAM_ANSWERS" default:"true" desc:"stream the assistant's answer into the thread as it is written (chat.startStream); where Slack refuses, the answer is posted when done"`
	MaxReplyMessages int  `envconfig:"MAX_REPLY_MESSAGES" default:"10" desc:"Slack messages one reply takes at most; the rest of a longer reply is uploaded to the thread as a file, with a note in the last message"`

	MCPConfig string `envconfig:"MCP_CONFIG" desc:"YAML file of MCP servers whose tools the agent may call (see README); unset: none"`

	ToolPolicy string `envconfig:"TOOL_POLICY" desc:"YAML file of per-channel tool allowlists (README \"Tool policy\"); unset: every channel may use every tool"`

	SuggestedPrompts string `envconfig:"SUGGESTED_PROMPTS" desc:"YAML file of the assistant view's greeting and suggested prompts, default and per channel (README \"Assistant view\"); unset: built-in ones"`

	FetchAllowPrivate bool          `envconfig:"FETCH_ALLOW_PRIVATE" default:"false" desc:"let fetch_url reach private, loopback and link-local addresses (also cloud metadata endpoints: use with care)"`
	FetchAllowHosts   []string      `envconfig:"FETCH_ALLOW_HOSTS" desc:"comma-separated hosts (name, name:port, *.suffix or CIDR) fetch_url may reach although they are private"`
	FetchMaxBytes     int           `envconfig:"FETCH_MAX_BYTES" default:"1048576" desc:"bytes fetch_url reads at most"`
	FetchTimeout      time.Duration `envconfig:"FETCH_TIMEOUT" default:"15s" desc:"timeout of one fetch_url call"`
	SearxngURL        string        `envconfig:"SEARXNG_URL" desc:"base URL of a SearXNG instance with the JSON format on; set, it enables web_search"`

	WorkflowsDir        string   `envconfig:"WORKFLOWS_DIR" desc:"directory of workflow YAML files added to the built-in ones (proposal, product-brief, blog)"`
	ModelProfiles       string   `envconfig:"MODEL_PROFILES" desc:"YAML file of named models (base_url, model, api_key: ${ENV_VAR}) that workflow artifacts name with model: (see README); unset: none"`
	PipelineConcurrency int      `envconfig:"PIPELINE_CONCURRENCY" default:"4" desc:"items of one pipeline written at once (auto artifacts, foreach items); an artifact's concurrency may lower it"`
	ApproverUserIDs     []string `envconfig:"APPROVER_USER_IDS" desc:"comma-separated Slack user ids: the only people who may approve artifacts, who may also do whatever a run's starter may (default: a workflow's permissions)"`

	MaxQueuedPerThread int     `envconfig:"MAX_QUEUED_PER_THREAD" default:"20" desc:"pending inputs (queued or running) one thread takes; past it, a message or command is refused with a notice to its author (clicks are not held to it; 0: no bound)"`
	MaxQueuedPerUser   int     `envconfig:"MAX_QUEUED_PER_USER" default:"10" desc:"pending inputs one person may have across threads, counted in the database by every replica alike; past it, a message or command is refused with a notice (0: no bound)"`
	UserRate           float64 `envconfig:"USER_RATE" default:"20" desc:"messages and commands one person may send per minute, per replica (a token bucket; clicks have a bucket of their own, four times USER_RATE and USER_BURST); past it, an input is refused with a notice (0: no limit)"`
	UserBurst          int     `envconfig:"USER_BURST" default:"10" desc:"size of each person's token buckets: the messages (and, apart, the clicks) one person may send at once before USER_RATE applies"`

	BudgetTokensPerUserDay    int64    `envconfig:"BUDGET_TOKENS_PER_USER_DAY" default:"0" desc:"tokens (prompt and completion) one person may use in 24 hours, from the usage ledger every replica writes; past it, their input gets a notice naming ADMINS and no model call (0: no budget)"`
	BudgetTokensPerChannelDay int64    `envconfig:"BUDGET_TOKENS_PER_CHANNEL_DAY" default:"0" desc:"tokens one channel may use in 24 hours, as BUDGET_TOKENS_PER_USER_DAY (0: no budget)"`
	Admins                    []string `envconfig:"ADMINS" desc:"comma-separated Slack user ids of the people to ask for more (named in a budget notice)"`

	WebhookConfig

	LogLevel  string `envconfig:"LOG_LEVEL" default:"info" desc:"debug, info, warn or error"`
	LogFormat string `envconfig:"LOG_FORMAT" default:"text" desc:"text or json"`
	HTTPAddr  string `envconfig:"HTTP_ADDR" default:"127.0.0.1:8080" desc:"address of /healthz, /readyz and /metrics; empty disables"`

	APIAddr     string `envconfig:"API_ADDR" desc:"address of the HTTP API (README, \"HTTP API\"), such as 127.0.0.1:8081; empty disables it"`
	APITokens   string `envconfig:"API_TOKENS" desc:"the HTTP API's bearer tokens: comma-separated name:secret pairs (secret: 16 characters or more); the name is the actor of the token's writes, api:<name>; required with API_ADDR"`
	TraceConfig        // tracing.go
}

// LoadConfig reads spec (a *Config or *StoreConfig) from the process environment and
// validates it. The error is one line naming the variable and what it expects.
func LoadConfig(spec any) error {
	if err := envconfig.Process("", spec); err != nil {
		return configError(err)
	}
	switch c := spec.(type) {
	case *Config:
		return c.validate()
	case *StoreConfig:
		return c.validate()
	}
	return nil
}

// configError turns envconfig's parse error into one line naming the variable.
func configError(err error) error {
	var pe *envconfig.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: expected %s, got %q", pe.KeyName, typeWord(pe.TypeName), pe.Value)
	}
	return err
}

func typeWord(t string) string {
	switch t {
	case "int", "int64":
		return "a whole number"
	case "time.Duration", "Duration":
		return "a duration such as 30s or 5m"
	case "bool":
		return "true or false"
	case "float64":
		return "a number"
	}
	return "a " + t
}

func (c *StoreConfig) validate() error {
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		return errors.New("DATABASE_URL: expected a postgres:// URL, or unset for the embedded SQLite store")
	}
	if c.DatabaseURL == "" && c.DataDir == "" {
		return errors.New("DATA_DIR: expected a directory for the embedded store")
	}
	return nil
}

func (c *Config) validate() error {
	if err := c.StoreConfig.validate(); err != nil {
		return err
	}
	checks := []struct {
		ok   bool
		name string
		want string
	}{
		{strings.HasPrefix(c.SlackBotToken, "xoxb-"), "SLACK_BOT_TOKEN", "the bot token, starting with xoxb-"},
		{strings.HasPrefix(c.SlackAppToken, "xapp-"), "SLACK_APP_TOKEN", "an app-level token with connections:write, starting with xapp-"},
		{isHTTPURL(c.SlackAPIURL) && strings.HasSuffix(c.SlackAPIURL, "/"), "SLACK_API_URL", "an http(s) URL ending in /, such as https://slack.com/api/"},
		{isHTTPURL(c.OpenAIBaseURL), "OPENAI_BASE_URL", "an http(s) URL such as https://api.openai.com/v1"},
		{c.OpenAIAPIKey != "" || c.OpenAIBaseURL != "https://api.openai.com/v1", "OPENAI_API_KEY", "an API key (or set OPENAI_BASE_URL to a server that needs none)"},
		{c.OpenAIModel != "", "OPENAI_MODEL", "a model name such as gpt-4o-mini"},
		{c.ModelTimeout > 0, "MODEL_TIMEOUT", "a positive duration"},
		{c.ModelMaxRetries >= 0, "MODEL_MAX_RETRIES", "0 or a whole number of retries"},
		{c.ModelRetryBudget > 0, "MODEL_RETRY_BUDGET", "a positive duration"},
		{c.ModelMaxConcurrent > 0, "MODEL_MAX_CONCURRENT", "a whole number above 0"},
		{c.MaxConcurrentTurns > 0, "MAX_CONCURRENT_TURNS", "a whole number above 0"},
		{c.LeaseTTL >= time.Second, "LEASE_TTL", "a duration of at least 1s"},
		{c.DatabaseMaxConns >= 0, "DATABASE_MAX_CONNS", "a whole number above 0"},
		{c.MaxSteps > 0, "MAX_STEPS", "a whole number above 0"},
		{c.ToolTimeout > 0, "TOOL_TIMEOUT", "a positive duration"},
		{c.TurnTimeout > 0, "TURN_TIMEOUT", "a positive duration"},
		{c.PipelineConcurrency > 0, "PIPELINE_CONCURRENCY", "a whole number above 0"},
		{c.HistoryMessages > 0, "HISTORY_MESSAGES", "a whole number above 0"},
		{c.HistoryTokens > 0, "HISTORY_TOKENS", "a whole number above 0"},
		{c.MaxReplyMessages > 0, "MAX_REPLY_MESSAGES", "a whole number above 0"},
		{c.FetchMaxBytes > 0, "FETCH_MAX_BYTES", "a whole number of bytes above 0"},
		{c.FetchTimeout > 0, "FETCH_TIMEOUT", "a positive duration"},
		{c.SearxngURL == "" || isHTTPURL(c.SearxngURL), "SEARXNG_URL", "an http(s) URL of a SearXNG instance"},
		{c.ShutdownTimeout > 0, "SHUTDOWN_TIMEOUT", "a positive duration"},
		{c.RetentionDays >= 0, "RETENTION_DAYS", "0 or a whole number of days"},
		{c.MaxQueuedPerThread >= 0, "MAX_QUEUED_PER_THREAD", "0 or a whole number of inputs"},
		{c.MaxQueuedPerUser >= 0, "MAX_QUEUED_PER_USER", "0 or a whole number of inputs"},
		{c.UserRate >= 0, "USER_RATE", "0 or a number of messages per minute"},
		{c.UserBurst > 0, "USER_BURST", "a whole number above 0"},
		{c.BudgetTokensPerUserDay >= 0, "BUDGET_TOKENS_PER_USER_DAY", "0 or a whole number of tokens"},
		{c.BudgetTokensPerChannelDay >= 0, "BUDGET_TOKENS_PER_CHANNEL_DAY", "0 or a whole number of tokens"},
		{validUserIDs(c.Admins), "ADMINS", "comma-separated Slack user ids such as U012AB3CD"},
		{validLevel(c.LogLevel), "LOG_LEVEL", "debug, info, warn or error"},
		{c.LogFormat == "text" || c.LogFormat == "json", "LOG_FORMAT", "text or json"},
		{c.HTTPAddr == "" || validAddr(c.HTTPAddr), "HTTP_ADDR", "host:port such as 127.0.0.1:8080"},
		{c.APIAddr == "" || validAddr(c.APIAddr), "API_ADDR", "host:port such as 127.0.0.1:8081"},
	}
	checks = append(checks, c.TraceConfig.checks()...) // tracing.go
	for _, ch := range checks {
		if !ch.ok {
			return fmt.Errorf("%s: expected %s", ch.name, ch.want)
		}
	}
	for name, pats := range map[string][]string{"SCOPE_ALLOW": c.ScopeAllow, "SCOPE_DENY": c.ScopeDeny} {
		if _, err := compileAll(pats); err != nil {
			return fmt.Errorf("%s: expected comma-separated regular expressions: %w", name, err)
		}
	}
	if c.ScopeClassifyResults && strings.TrimSpace(c.ScopeDescription) == "" {
		return errors.New("SCOPE_CLASSIFY_RESULTS: expected SCOPE_DESCRIPTION to be set, to classify tool results against")
	}
	if tokens, err := api.ParseTokens(c.APITokens); err != nil {
		return fmt.Errorf("API_TOKENS: expected comma-separated name:secret pairs: %w", err)
	} else if c.APIAddr != "" && len(tokens) == 0 {
		return errors.New("API_TOKENS: expected at least one name:secret pair with API_ADDR set")
	}
	if _, err := planner.ParseStrategy(c.Strategy); err != nil {
		return fmt.Errorf("STRATEGY: expected react, planner or auto: %w", err)
	}
	if _, err := planner.ParseChannelStrategies(c.StrategyChannels); err != nil {
		return fmt.Errorf("STRATEGY_CHANNELS: expected channel:strategy pairs such as C123:planner,C456:react: %w", err)
	}
	if _, err := agents.ParseChannelFiles(c.ExecutorInstructionsChannels); err != nil {
		return fmt.Errorf("EXECUTOR_INSTRUCTIONS_CHANNELS: expected channel:path pairs such as C123:/etc/tw/support.md: %w", err)
	}
	if err := c.fetchConfig().Validate(); err != nil {
		return fmt.Errorf("FETCH_ALLOW_HOSTS: %w", err)
	}
	if err := c.WebhookConfig.validate(); err != nil {
		return err
	}
	if c.OpenAISmallModel == "" {
		c.OpenAISmallModel = c.OpenAIModel
	}
	if c.DatabaseMaxConns == 0 {
		// A turn holds a connection only for its statements; two replicas at this
		// default stay within Postgres's default max_connections (100).
		c.DatabaseMaxConns = min(max(10, c.MaxConcurrentTurns/4), 40)
	}
	return nil
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func validAddr(s string) bool {
	_, _, err := net.SplitHostPort(s)
	return err == nil
}

func validLevel(s string) bool {
	var l slog.Level
	return l.UnmarshalText([]byte(s)) == nil
}

// compileAll compiles case-insensitive regular expressions.
func compileAll(pats []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range pats {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		re, err := regexp.Compile("(?i)" + p)
		if err != nil {
			return nil, err
		}
		out = append(out, re)
	}
	return out, nil
}

// printEnvUsage writes the table of configuration variables, generated from Config's
// tags.
func printEnvUsage(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	const row = "{{range .}}  {{usage_key .}}\t{{usage_default .}}\t{{usage_description .}}\n{{end}}"
	if err := envconfig.Usagef("", &Config{}, tw, "Environment:\n"+row); err != nil {
		return err
	}
	if err := envconfig.Usagef("", &DevConfig{}, tw, row); err != nil {
		return err
	}
	return tw.Flush()
}

// clientConfig is the configuration of the model client of OPENAI_BASE_URL, and the
// retry and concurrency settings of every model profile's client.
func (c *Config) clientConfig(log *slog.Logger) agents.ClientConfig {
	retries := c.ModelMaxRetries
	if retries == 0 {
		retries = -1 // agents: zero picks the default; negative never retries
	}
	return agents.ClientConfig{
		BaseURL:       c.OpenAIBaseURL,
		APIKey:        c.OpenAIAPIKey,
		Timeout:       c.ModelTimeout,
		MaxRetries:    retries,
		MaxElapsed:    c.ModelRetryBudget,
		MaxConcurrent: c.ModelMaxConcurrent,
		Logger:        log,
	}
}

// fetchConfig is the fetch_url tool's configuration.
func (c *Config) fetchConfig() web.FetchConfig {
	return web.FetchConfig{MaxBytes: int64(c.FetchMaxBytes), Timeout: c.FetchTimeout, AllowPrivate: c.FetchAllowPrivate, AllowHosts: c.FetchAllowHosts}
}

// validUserIDs reports whether every id looks like a Slack user id (U… or W…, upper
// case letters and digits).
func validUserIDs(ids []string) bool {
	for _, id := range ids {
		if len(id) < 2 || (id[0] != 'U' && id[0] != 'W') || strings.ToUpper(id) != id || strings.ContainsAny(id, " <@>") {
			return false
		}
	}
	return true
}
