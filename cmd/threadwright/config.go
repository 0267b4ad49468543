package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/planner"
	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/bot"
)

// StoreConfig selects the store; it is all that `threadwright migrate` needs.
type StoreConfig struct {
	DatabaseURL      string `envconfig:"DATABASE_URL" group:"Storage" desc:"Postgres DSN, e.g. postgres://user:pass@host:5432/threadwright?sslmode=disable. Unset uses the embedded SQLite file $DATA_DIR/threadwright.db"`
	DataDir          string `envconfig:"DATA_DIR" default:"./data" desc:"Directory of the embedded SQLite store. With Postgres, it holds the spool (spool.db): inputs accepted while the database is unreachable, moved into it when it answers again"`
	DatabaseMaxConns int    `envconfig:"DATABASE_MAX_CONNS" desc:"Postgres connections this process opens at most; 0: a quarter of MAX_CONCURRENT_TURNS, from 10 to 40. A turn holds a connection only for the few milliseconds of each statement; each replica opens 4 more, 2 for the intake (storing inputs before their ack) and 2 for renewing leases, so a replica opens at most DATABASE_MAX_CONNS + 4 (44 at the defaults) and two replicas use at most 88 of Postgres's default 100. When the server refuses connections (too many clients), statements are retried with backoff"`
}

// Config is threadwright's configuration, read from the environment with envconfig.
// Every field's desc tag is its documentation: docs/configuration.md is generated
// from them (a group tag starts a group of that page; see
// cmd/threadwright/internal/configdoc), and `threadwright help` prints them.
//
//go:generate go test -run TestConfigReference . -update
type Config struct {
	StoreConfig

	SlackBotToken     string `envconfig:"SLACK_BOT_TOKEN" group:"Slack" desc:"Required. Bot token, xoxb-…"`
	SlackAppToken     string `envconfig:"SLACK_APP_TOKEN" desc:"Required. App-level token with connections:write, xapp-… (Socket Mode)"`
	SlackAPIURL       string `envconfig:"SLACK_API_URL" default:"https://slack.com/api/" desc:"Slack Web API base URL (the emulator's in dev and tests)"`
	SocketConnections int    `envconfig:"SOCKET_CONNECTIONS" default:"2" desc:"Socket Mode connections this process opens, 1 to 10. Slack spreads the app's events across all its open connections, and each is read and parsed on a goroutine of its own, so that a burst is read fast enough. Slack allows 10 per app, counting every replica's: keep replicas × SOCKET_CONNECTIONS at 10 or below (docs/operations.md, \"Deploy\")"`

	OpenAIAPIKey     string        `envconfig:"OPENAI_API_KEY" group:"Model" desc:"Key of the model endpoint: required for OpenAI; may be empty when OPENAI_BASE_URL points at a server that needs none"`
	OpenAIBaseURL    string        `envconfig:"OPENAI_BASE_URL" default:"https://api.openai.com/v1" desc:"Any OpenAI-compatible endpoint: OpenAI, Azure OpenAI, vLLM, Ollama (http://localhost:11434/v1), LM Studio"`
	OpenAIModel      string        `envconfig:"OPENAI_MODEL" default:"gpt-4o-mini" desc:"Main model (executor and answers)"`
	OpenAISmallModel string        `envconfig:"OPENAI_SMALL_MODEL" desc:"Small model: scope checks, history summaries, reading replies to options, the planner's understanding and routing. Unset: OPENAI_MODEL"`
	ModelTimeout     time.Duration `envconfig:"MODEL_TIMEOUT" default:"60s" desc:"Timeout of one model call attempt. Calls retry with exponential backoff and jitter on 5xx, timeouts and connection errors, and after the Retry-After of a 429"`

	ModelMaxRetries    int           `envconfig:"MODEL_MAX_RETRIES" default:"5" desc:"Retries of a model call after a 5xx, a timeout or a connection error: 5 allows 6 attempts, 0 never retries (429s included). An HTTP 429 does not count: the call waits as long as its Retry-After (or retry-after-ms) asks, within MODEL_RETRY_BUDGET"`
	ModelRetryBudget   time.Duration `envconfig:"MODEL_RETRY_BUDGET" default:"60s" desc:"Time from a model call's first attempt to the start of its last retry, waits included. A wait that would pass it ends the call with the error"`
	ModelMaxConcurrent int           `envconfig:"MODEL_MAX_CONCURRENT" default:"500" desc:"Model calls in flight at once per endpoint (the main one, and each model profile's). A burst of 429s halves the limit (not below 1) and a 429's Retry-After holds back every call to that endpoint; successes grow it back by one at a time. Calls beyond it wait for their turn"`

	ScopeDescription string   `envconfig:"SCOPE_DESCRIPTION" group:"Scope" desc:"What the bot is for, e.g. questions about ACME's billing system. Empty lets every request through and skips the scope check"`
	ScopeAllow       []string `envconfig:"SCOPE_ALLOW" desc:"Comma-separated regular expressions (case-insensitive). A match is in scope without a model call"`
	ScopeDeny        []string `envconfig:"SCOPE_DENY" desc:"Comma-separated regular expressions (case-insensitive). A match is refused without a model call; deny wins over allow"`
	// ScopeClassifyResults classifies tool results without a scope label
	// (docs/tools.md, "The tool-result contract"): "auto" (on whenever
	// SCOPE_DESCRIPTION is set), "true" or "false"; read it with classifyResults.
	ScopeClassifyResults string `envconfig:"SCOPE_CLASSIFY_RESULTS" default:"auto" desc:"Check the tool results that carry no out_of_scope label against SCOPE_DESCRIPTION with the small model before answering (docs/tools.md, \"The tool-result contract\"). It costs one small-model call per turn whose tool results carry no label (at most 24 KiB of their text). auto turns it on whenever SCOPE_DESCRIPTION is set; false turns it off; true needs SCOPE_DESCRIPTION"`

	MaxConcurrentTurns    int           `envconfig:"MAX_CONCURRENT_TURNS" group:"Turns" default:"2000" desc:"Turns running at once in this process, across threads. A turn spends most of its time waiting for the model and Slack, so the bound is high: a burst of 1,000 threads runs at once, without queueing (against a model that answers in 2 s they finish within 10 s), and a turn that waits holds tens of KiB, so 2,000 of them hold about 100 MiB; lower it to bound the memory of a smaller container. The model's rate limit is met by MODEL_MAX_CONCURRENT's adaptive limit. A thread waiting for a free turn shows \"is waiting in line…\" as its status. One thread's inputs always run one at a time, in order, across all replicas"`
	LeaseTTL              time.Duration `envconfig:"LEASE_TTL" default:"10s" desc:"How long a thread's lease lives without renewal (at least 1s; renewed every tenth of it). A replica that dies is taken over within LEASE_TTL plus a fifth of it (12 s by default), whatever TURN_TIMEOUT is"`
	MaxSteps              int           `envconfig:"MAX_STEPS" default:"8" desc:"Model calls per turn that may use tools; then one last call must answer without tools"`
	ToolTimeout           time.Duration `envconfig:"TOOL_TIMEOUT" default:"30s" desc:"Timeout of one tool call"`
	TurnTimeout           time.Duration `envconfig:"TURN_TIMEOUT" default:"5m" desc:"Timeout of one whole turn. A turn past it says in the thread that it took too long, saves and finishes its input"`
	DoubleTexting         string        `envconfig:"DOUBLE_TEXTING" default:"merge" desc:"What a person's message does when it arrives while a turn of its thread runs or waits: merge (wait DOUBLE_TEXTING_WINDOW after the person's newest message, then answer the burst of their messages as one question), queue (answer each message in turn), or interrupt (stop the running turn, which says so, and answer the newer message). merge is the default because people type a question in a few short messages (\"hey\" · \"can you check\" · \"the deploy of api-7?\"): they get one answer to all of it, not three answers of which two say they were stopped; docs/architecture.md, \"Double texting\""`
	DoubleTextingChannels string        `envconfig:"DOUBLE_TEXTING_CHANNELS" desc:"Per-channel double-texting policies, e.g. C123:interrupt,C456:queue"`
	DoubleTextingWindow   time.Duration `envconfig:"DOUBLE_TEXTING_WINDOW" default:"2s" desc:"How long merge waits after a person's newest message for their next one before it answers the burst. Each message of a burst restarts it; it delays every answer under merge by this much"`
	HistoryMessages       int           `envconfig:"HISTORY_MESSAGES" default:"40" desc:"Newest messages of the thread loaded for a turn"`
	HistoryTokens         int           `envconfig:"HISTORY_TOKENS" default:"8000" desc:"Estimated tokens (4 characters each) of thread history given to the model. Past it, or when the unsummarized messages fill three quarters of HISTORY_MESSAGES, the older half is summarized by the small model into the checkpoint. The prompt is then the summary plus the recent messages. Artifact texts, selections and workflow state live in the checkpoint and are never summarized away"`
	ShutdownTimeout       time.Duration `envconfig:"SHUTDOWN_TIMEOUT" default:"30s" desc:"On SIGTERM/SIGINT, how long running turns may finish before they are cancelled. The threads of cancelled turns are handed over at once to another replica, or to this one when it starts again"`
	RetentionDays         int           `envconfig:"RETENTION_DAYS" default:"0" desc:"Delete conversations idle for this many days, checked hourly (0 keeps them)"`

	Strategy         string `envconfig:"STRATEGY" group:"Strategies" default:"react" desc:"How the assistant works: react (one tool-calling loop), planner (understand, plan tasks with dependencies, run independent tasks in parallel, reflect, answer), or auto (the small model picks per question); docs/tools.md, \"Strategies\""`
	StrategyChannels string `envconfig:"STRATEGY_CHANNELS" desc:"Per-channel strategies, e.g. C123:planner,C456:react"`

	ExecutorInstructions         string `envconfig:"EXECUTOR_INSTRUCTIONS" desc:"Markdown or text file added to the executor's and the planner's system prompt, e.g. the deployment's workflow patterns (docs/tools.md, \"Executor instructions\"); a \"## Tool rules\" section in it replaces the built-in tool rules; at most 16 KiB"`
	ExecutorInstructionsChannels string `envconfig:"EXECUTOR_INSTRUCTIONS_CHANNELS" desc:"Per-channel instruction files used instead of EXECUTOR_INSTRUCTIONS, e.g. C123:/etc/threadwright/support.md,C456:/etc/threadwright/eng.md"`

	StreamAnswers    bool          `envconfig:"STREAM_ANSWERS" group:"Answers" default:"true" desc:"Stream the assistant's answer into the thread as it is written (chat.startStream, appendStream, stopStream; appends at most about once a second); where Slack refuses, the answer is posted when done. Answers longer than about 3,500 characters stream their beginning and post the rest"`
	StreamRotation   time.Duration `envconfig:"STREAM_ROTATION" group:"Answers" default:"4m" desc:"Age at which a streamed answer goes on in a fresh message below it: Slack ends a stream about five minutes after it starts (docs/operations.md, \"Reply bounds\"). No text is lost or repeated"`
	MaxReplyMessages int           `envconfig:"MAX_REPLY_MESSAGES" default:"10" desc:"Slack messages one reply takes at most. The rest of a longer reply is uploaded to the thread as rest-of-answer.txt, and the last message says so (docs/operations.md, \"Reply bounds\")"`

	MCPConfig string `envconfig:"MCP_CONFIG" group:"Tools" desc:"YAML file of MCP servers whose tools the agent may call (docs/tools.md, \"MCP servers\"); unset: none"`

	ToolPolicy string `envconfig:"TOOL_POLICY" desc:"YAML file of per-channel tool allowlists (docs/tools.md, \"Tool policy\"); unset, every channel may use every tool"`

	AgentSurface     string `envconfig:"AGENT_SURFACE" group:"Answers" default:"agent" desc:"Where people talk to the app in its own space: agent (Slack's agent view: the Messages tab, agent sessions with their status, title and native Stop, and what the person views told to the model) or assistant (the older assistant view, for apps that have not migrated). Match the app's manifest (threadwright manifest); docs/tools.md, \"Agent view\""`
	SuggestedPrompts string `envconfig:"SUGGESTED_PROMPTS" group:"Answers" desc:"YAML file of the assistant view's greeting and suggested prompts, by default and per channel (docs/tools.md, \"Assistant view\"); unset, a built-in greeting and prompts"`

	FetchAllowPrivate bool          `envconfig:"FETCH_ALLOW_PRIVATE" group:"Tools" default:"false" desc:"Let fetch_url (and fetch: artifacts) reach private, loopback and link-local addresses. This also opens cloud metadata endpoints, so use it with care"`
	FetchAllowHosts   []string      `envconfig:"FETCH_ALLOW_HOSTS" desc:"Comma-separated exceptions to that rule, hosts fetch_url may reach although they are private: name, name:port, *.suffix or a CIDR"`
	FetchMaxBytes     int           `envconfig:"FETCH_MAX_BYTES" default:"1048576" desc:"Bytes fetch_url reads at most (also each page of a fetch: artifact, such as the blog's sources)"`
	FetchTimeout      time.Duration `envconfig:"FETCH_TIMEOUT" default:"15s" desc:"Timeout of one fetch_url call (and of each page a fetch: artifact reads)"`
	FileMaxBytes      int64         `envconfig:"FILE_MAX_BYTES" default:"20971520" desc:"Bytes of a file attached in Slack read at most (docs/architecture.md, \"Files\"); a larger file is refused with a message in the thread before it is downloaded. Files are downloaded under fetch_url's address rule and FETCH_TIMEOUT, and each read within another; the files of one message take three FETCH_TIMEOUTs at most together, and one not reached by then is refused as unreadable"`
	FileMaxPages      int           `envconfig:"FILE_MAX_PAGES" default:"50" desc:"Pages of an attached PDF read at most; later pages are left out and the model is told"`
	FileMaxPixels     int64         `envconfig:"FILE_MAX_PIXELS" default:"40000000" desc:"Pixels (width × height) of an attached image at most; a larger image is refused"`
	VisionModels      []string      `envconfig:"VISION_MODELS" default:"gpt-4o*,gpt-4.1*,gpt-4.5*,gpt-5*,o1,o1-2*,o3*,o4*,chatgpt-4o*,claude-3*,claude-*-4*,gemini*,llava*,qwen*-vl*,llama-3.2-*vision*" desc:"Comma-separated name patterns (* matches any run of characters) of the models that can see images: an attached image is shown to OPENAI_MODEL only when its name matches one; otherwise the bot says it cannot see images"`
	SearxngURL        string        `envconfig:"SEARXNG_URL" desc:"Base URL of a SearXNG instance with its JSON format enabled. Set, it adds the web_search tool (docs/tools.md, \"Web search\")"`
	BraveAPIKey       string        `envconfig:"BRAVE_SEARCH_API_KEY" desc:"A Brave Search API subscription token. Set, web_search can search through Brave Search"`
	TavilyAPIKey      string        `envconfig:"TAVILY_API_KEY" desc:"A Tavily API key (tvly-…). Set, web_search can search through Tavily"`
	WebSearchProvider string        `envconfig:"WEB_SEARCH_PROVIDER" desc:"The provider behind web_search when several are configured: searxng, brave or tavily. Unset: the first configured, in that order"`
	WebSearchEndpoint string        `envconfig:"WEB_SEARCH_ENDPOINT" desc:"Replaces the hosted provider's URL (Brave Search or Tavily), for a proxy. Unset: the provider's own"`

	WorkflowsDir        string   `envconfig:"WORKFLOWS_DIR" group:"Workflows" desc:"Directory of workflow YAML files offered besides the built-ins (proposal, product-brief, blog). An invalid file stops start-up with file:line: reason"`
	ModelProfiles       string   `envconfig:"MODEL_PROFILES" desc:"YAML file of named models (base_url, model, api_key: ${ENV_VAR}, timeout) that workflow artifacts and editor passes name with model: or prefer_model: (the built-in blog writes its article on \"large\" and polishes it on \"enhance\" when defined; docs/workflows.md, \"Pipelines\"); unset: none"`
	PipelineConcurrency int      `envconfig:"PIPELINE_CONCURRENCY" default:"4" desc:"Items of one pipeline written at once (docs/workflows.md, \"Pipelines\"); an artifact's concurrency may lower it"`
	ApproverUserIDs     []string `envconfig:"APPROVER_USER_IDS" desc:"Comma-separated Slack user ids, e.g. U012AB3CD,U045EF6GH: the only people who may approve artifacts; they may also do whatever a run's starter may (docs/workflows.md, \"Permissions\"). Unset, a workflow's permissions decide"`

	MaxQueuedPerThread int     `envconfig:"MAX_QUEUED_PER_THREAD" group:"Limits" default:"20" desc:"Pending inputs (queued or running) one thread takes. Past it, a message or command is not queued and its author gets one ephemeral notice; clicks are not held to it (docs/operations.md, \"Limits and secrets\"). 0: no bound"`
	MaxQueuedPerUser   int     `envconfig:"MAX_QUEUED_PER_USER" default:"10" desc:"Pending inputs one person may have across threads, counted in the database, so every replica agrees. Past it, as above. 0: no bound"`
	UserRate           float64 `envconfig:"USER_RATE" default:"20" desc:"Messages and commands one person may send per minute, per replica: a token bucket (clicks have a bucket of their own, four times as fast and as deep). Past it, as above, and the notice says when to try again. 0: no limit"`
	UserBurst          int     `envconfig:"USER_BURST" default:"10" desc:"Size of each person's buckets: what one person may send at once before USER_RATE applies"`

	BudgetTokensPerUserDay    int64    `envconfig:"BUDGET_TOKENS_PER_USER_DAY" group:"Budgets" default:"0" desc:"Tokens (prompt and completion) one person may use in 24 hours, summed from the usage ledger that every replica writes. Past it, the person's next message, command or click gets a polite ephemeral notice naming ADMINS and when the budget frees up, and no model call is made (docs/operations.md, \"Usage, cost and budgets\"). 0: no budget"`
	BudgetTokensPerChannelDay int64    `envconfig:"BUDGET_TOKENS_PER_CHANNEL_DAY" default:"0" desc:"The same for all people of one channel together. 0: no budget"`
	Admins                    []string `envconfig:"ADMINS" desc:"Comma-separated Slack user ids, e.g. U012AB3CD,U045EF6GH: the people to ask for more, named as mentions in a budget notice. Unset, the notice says \"your workspace admins\""`

	WebhookConfig `group:"Webhooks"` // webhooks.go

	LogLevel     string `envconfig:"LOG_LEVEL" group:"Logs and health" default:"info" desc:"debug, info, warn or error"`
	LogFormat    string `envconfig:"LOG_FORMAT" default:"text" desc:"text or json"`
	HTTPAddr     string `envconfig:"HTTP_ADDR" default:"127.0.0.1:8080" desc:"Address of GET /healthz (the process is up), GET /readyz (connected to Slack and the store answers; otherwise 503 with a fixed reason such as \"not ready: store unavailable\", the detail in the log) and GET /metrics (Prometheus; docs/operations.md, \"Metrics\"). Empty disables"`
	MetricsToken string `envconfig:"METRICS_TOKEN" desc:"A bearer token that GET /metrics requires (Authorization: Bearer <token>; 401 without it): set it whenever HTTP_ADDR is reachable by others than your Prometheus, since the metrics name the tools, models and workflows (SECURITY.md). /healthz and /readyz stay open. Scrubbed from logs like every secret"`

	DebugAddr       string `envconfig:"DEBUG_ADDR" desc:"Address of the profiling endpoints (net/http/pprof under /debug/pprof/; docs/operations.md, \"Profiling\"), e.g. 127.0.0.1:6060 or :6060 (loopback). Unset disables them. They bind a loopback address only, unless DEBUG_ADDR_REMOTE is true"`
	DebugAddrRemote bool   `envconfig:"DEBUG_ADDR_REMOTE" default:"false" desc:"Lets DEBUG_ADDR name an address other than loopback. The profiles show the program's internals and cost CPU while taken: expose them only on a private network"`

	APIAddr             string `envconfig:"API_ADDR" group:"HTTP API" desc:"Address of the HTTP API (docs/api.md, \"HTTP API\"), e.g. 127.0.0.1:8081. Unset disables it"`
	APITokens           string `envconfig:"API_TOKENS" desc:"The HTTP API's bearer tokens, comma-separated, each name:secret;scope=<scopes>[;channels=<ids>][;trusted] (docs/api.md, \"Tokens\"), e.g. ci-bot:…;scope=runs:read runs:write;channels=C0123,portal:…;scope=knowledge:write. Scopes, space-separated: runs:read, runs:write, conversations:read, conversations:read:dm (direct messages; admin does not grant it), knowledge:read, knowledge:write, admin. channels limits the token to those channel ids; trusted makes its uploads trusted like threadwright ingest. A secret has 16 characters or more. Required with API_ADDR. The name appears in logs and as the actor api:<name> of the token's writes; the secrets are scrubbed from logs like every configured secret"`
	APIUploadsInFlight  int    `envconfig:"API_UPLOADS_IN_FLIGHT" default:"2" desc:"Knowledge uploads (POST /v1/knowledge/sources) the API handles at once, for all tokens together; another gets 503 with Retry-After. A 10 MB document takes many times its size in memory while it is decoded and split (SECURITY.md)"`
	APIUploadsPerMinute int    `envconfig:"API_UPLOADS_PER_MINUTE" default:"10" desc:"Knowledge uploads a token may make a minute, in a burst of as many; past it, 429 with Retry-After"`

	TraceConfig `group:"Traces"` // tracing.go
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

func (c *StoreConfig) validate() error {
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") {
		return errors.New("DATABASE_URL: expected a postgres:// URL, or unset for the embedded SQLite store")
	}
	if c.DatabaseURL == "" && c.DataDir == "" {
		return errors.New("DATA_DIR: expected a directory for the embedded store")
	}
	return nil
}

// validate checks c variable by variable, the first that fails giving the error, and
// fills in the defaults that depend on other variables.
func (c *Config) validate() error {
	if err := c.StoreConfig.validate(); err != nil {
		return err
	}
	if err := envError(append(c.checks(), c.TraceConfig.checks()...)); err != nil { // tracing.go
		return err
	}
	if err := c.validateParsed(); err != nil {
		return err
	}
	if err := c.WebhookConfig.validate(); err != nil {
		return err
	}
	if c.OpenAISmallModel == "" {
		c.OpenAISmallModel = c.OpenAIModel
	}
	if c.DatabaseMaxConns == 0 {
		// A turn holds a connection only for its statements; two replicas at this
		// default, with the store's own IntakeConns and RenewConns each, stay within
		// Postgres's default max_connections (100).
		c.DatabaseMaxConns = min(max(10, c.MaxConcurrentTurns/4), 40)
	}
	return nil
}

// checks are the checks of the variables of c whose values are read as they are.
func (c *Config) checks() []envCheck {
	return []envCheck{
		{strings.HasPrefix(c.SlackBotToken, "xoxb-"), "SLACK_BOT_TOKEN", "the bot token, starting with xoxb-"},
		{strings.HasPrefix(c.SlackAppToken, "xapp-"), "SLACK_APP_TOKEN", "an app-level token with connections:write, starting with xapp-"},
		{isHTTPURL(c.SlackAPIURL) && strings.HasSuffix(c.SlackAPIURL, "/"), "SLACK_API_URL", "an http(s) URL ending in /, such as https://slack.com/api/"},
		{c.SocketConnections >= 1 && c.SocketConnections <= bot.MaxConnections, "SOCKET_CONNECTIONS", "a whole number from 1 to 10 (Slack allows an app 10 socket mode connections, across all replicas)"},
		{isHTTPURL(c.OpenAIBaseURL), "OPENAI_BASE_URL", "an http(s) URL such as https://api.openai.com/v1"},
		{c.OpenAIAPIKey != "" || c.OpenAIBaseURL != "https://api.openai.com/v1", "OPENAI_API_KEY", "an API key (or set OPENAI_BASE_URL to a server that needs none)"},
		{c.OpenAIModel != "", "OPENAI_MODEL", "a model name such as gpt-4o-mini"},
		{c.ModelTimeout > 0, "MODEL_TIMEOUT", "a positive duration"},
		{c.ModelMaxRetries >= 0, "MODEL_MAX_RETRIES", "0 or a whole number of retries"},
		{c.ModelRetryBudget > 0, "MODEL_RETRY_BUDGET", "a positive duration"},
		{c.ModelMaxConcurrent > 0, "MODEL_MAX_CONCURRENT", "a whole number above 0"},
		{c.MaxConcurrentTurns > 0, "MAX_CONCURRENT_TURNS", "a whole number above 0"},
		{c.LeaseTTL >= time.Second, "LEASE_TTL", "a duration of at least 1s"},
		{c.DoubleTextingWindow > 0, "DOUBLE_TEXTING_WINDOW", "a positive duration"},
		{c.DatabaseMaxConns >= 0, "DATABASE_MAX_CONNS", "a whole number above 0"},
		{c.MaxSteps > 0, "MAX_STEPS", "a whole number above 0"},
		{c.ToolTimeout > 0, "TOOL_TIMEOUT", "a positive duration"},
		{c.TurnTimeout > 0, "TURN_TIMEOUT", "a positive duration"},
		{c.PipelineConcurrency > 0, "PIPELINE_CONCURRENCY", "a whole number above 0"},
		{c.HistoryMessages > 0, "HISTORY_MESSAGES", "a whole number above 0"},
		{c.HistoryTokens > 0, "HISTORY_TOKENS", "a whole number above 0"},
		{c.MaxReplyMessages > 0, "MAX_REPLY_MESSAGES", "a whole number above 0"},
		{c.StreamRotation > 0, "STREAM_ROTATION", "a duration above 0, such as 4m"},
		{c.AgentSurface == string(bot.SurfaceAgent) || c.AgentSurface == string(bot.SurfaceAssistant), "AGENT_SURFACE", "agent or assistant"},
		{c.FetchMaxBytes > 0, "FETCH_MAX_BYTES", "a whole number of bytes above 0"},
		{c.FetchTimeout > 0, "FETCH_TIMEOUT", "a positive duration"},
		{c.FileMaxBytes > 0, "FILE_MAX_BYTES", "a whole number of bytes above 0"},
		{c.FileMaxPages > 0, "FILE_MAX_PAGES", "a whole number above 0"},
		{c.FileMaxPixels > 0, "FILE_MAX_PIXELS", "a whole number above 0"},
		{c.SearxngURL == "" || isHTTPURL(c.SearxngURL), "SEARXNG_URL", "an http(s) URL of a SearXNG instance"},
		{c.WebSearchEndpoint == "" || isHTTPURL(c.WebSearchEndpoint), "WEB_SEARCH_ENDPOINT", "an http(s) URL"},
		{c.validSearchProvider(), "WEB_SEARCH_PROVIDER", "searxng, brave or tavily, with its URL or key set (SEARXNG_URL, BRAVE_SEARCH_API_KEY, TAVILY_API_KEY)"},
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
		{c.DebugAddr == "" || validAddr(c.DebugAddr), "DEBUG_ADDR", "host:port such as 127.0.0.1:6060"},
		{c.DebugAddr == "" || c.DebugAddrRemote || loopbackAddr(c.DebugAddr), "DEBUG_ADDR", "a loopback address such as 127.0.0.1:6060, or set DEBUG_ADDR_REMOTE=true"},
		{c.APIAddr == "" || validAddr(c.APIAddr), "API_ADDR", "host:port such as 127.0.0.1:8081"},
		{c.APIUploadsInFlight >= 1, "API_UPLOADS_IN_FLIGHT", "a whole number of 1 or more"},
		{c.APIUploadsPerMinute >= 1, "API_UPLOADS_PER_MINUTE", "a whole number of 1 or more"},
	}
}

// classifyResults reports whether the tool results without a scope label are
// classified (SCOPE_CLASSIFY_RESULTS): by default ("auto") whenever SCOPE_DESCRIPTION is
// set; "false" turns it off. Call it after LoadConfig, which rejects other values.
func (c *Config) classifyResults() bool {
	on, err := c.scopeClassifyResults()
	return on && err == nil
}

// scopeClassifyResults parses SCOPE_CLASSIFY_RESULTS: "auto" (or empty) is on when
// SCOPE_DESCRIPTION is set, anything else is read as a boolean ("true", "false", "1",
// "0"…); any other value is an error naming the setting.
func (c *Config) scopeClassifyResults() (bool, error) {
	v := strings.ToLower(strings.TrimSpace(c.ScopeClassifyResults))
	if v == "" || v == "auto" {
		return strings.TrimSpace(c.ScopeDescription) != "", nil
	}
	on, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("SCOPE_CLASSIFY_RESULTS: expected auto, true or false, got %q", c.ScopeClassifyResults)
	}
	return on, nil
}

// validateParsed checks the variables of c whose values are parsed: the scope's
// regular expressions, the API's tokens, the strategies, the channels' instruction
// files and the hosts fetch_url may reach.
func (c *Config) validateParsed() error {
	for name, pats := range map[string][]string{"SCOPE_ALLOW": c.ScopeAllow, "SCOPE_DENY": c.ScopeDeny} {
		if _, err := compileAll(pats); err != nil {
			return fmt.Errorf("%s: expected comma-separated regular expressions: %w", name, err)
		}
	}
	if on, err := c.scopeClassifyResults(); err != nil {
		return err
	} else if on && strings.TrimSpace(c.ScopeDescription) == "" {
		return errors.New("SCOPE_CLASSIFY_RESULTS: expected SCOPE_DESCRIPTION to be set, to classify tool results against")
	}
	if tokens, err := api.ParseTokens(c.APITokens); err != nil {
		return fmt.Errorf("API_TOKENS: expected comma-separated name:secret;scope=… tokens: %w", err)
	} else if c.APIAddr != "" && len(tokens) == 0 {
		return errors.New("API_TOKENS: expected at least one name:secret;scope=… token with API_ADDR set")
	}
	if _, err := planner.ParseStrategy(c.Strategy); err != nil {
		return fmt.Errorf("STRATEGY: expected react, planner or auto: %w", err)
	}
	if _, err := planner.ParseChannelStrategies(c.StrategyChannels); err != nil {
		return fmt.Errorf("STRATEGY_CHANNELS: expected channel:strategy pairs such as C123:planner,C456:react: %w", err)
	}
	if _, err := doubleTexting(c.DoubleTexting, c.DoubleTextingChannels); err != nil {
		return err
	}
	if _, err := agents.ParseChannelFiles(c.ExecutorInstructionsChannels); err != nil {
		return fmt.Errorf("EXECUTOR_INSTRUCTIONS_CHANNELS: expected channel:path pairs such as C123:/etc/tw/support.md: %w", err)
	}
	if err := c.fetchConfig().Validate(); err != nil {
		return fmt.Errorf("FETCH_ALLOW_HOSTS: %w", err)
	}
	return nil
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
