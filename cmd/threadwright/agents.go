package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/agents/planner"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/metrics"
)

// agentSet is the model side of a run: the model client and the agents the
// conversation service calls.
type agentSet struct {
	// model answers every model call: Main.Model, or client.
	model agents.Completer
	// client is the client of OPENAI_BASE_URL, when made here (nil with Main.Model);
	// modelConfig is its configuration, the base of the model profiles' clients.
	client      *agents.Client
	modelConfig agents.ClientConfig
	// scope checks a request against SCOPE_DESCRIPTION, SCOPE_ALLOW and SCOPE_DENY
	// (nil: every request is in scope).
	scope      conversation.ScopeChecker
	executor   conversation.Executor
	workflow   *agents.WorkflowAgent
	summarizer *agents.Summarizer
	// tools is the registry the agents call, for what a workflow's cards say of
	// the tools its artifacts name.
	tools *agents.Registry
}

// newAgents makes the model client (its calls counted by mx), unless model is set,
// and the agents on it, with the tools of registry. hooks wrap the model clients and
// the scope check.
func (rc *runConfig) newAgents(model agents.Completer, registry *agents.Registry, mx *metrics.Metrics, hooks Hooks) (agentSet, error) {
	a := agentSet{model: model, modelConfig: rc.clientConfig(rc.log), tools: registry}
	if mx != nil {
		a.modelConfig.Metrics = mx
	}
	if a.model == nil {
		a.client = agents.NewClient(a.modelConfig)
		a.model = a.client
	}
	profiles := modelProfiles(rc.files.profiles, a.modelConfig, a.client)
	if hooks.Model != nil {
		a.model = hooks.Model(a.model)
		for name, p := range profiles {
			p.Client = hooks.Model(p.Client)
			profiles[name] = p
		}
	}
	if rc.ScopeDescription != "" || len(rc.ScopeAllow) > 0 || len(rc.ScopeDeny) > 0 {
		allow, _ := compileAll(rc.ScopeAllow) // validated by LoadConfig
		deny, _ := compileAll(rc.ScopeDeny)
		a.scope = agents.NewScopeChecker(agents.ScopeConfig{
			Client: a.model, Model: rc.OpenAISmallModel, Description: rc.ScopeDescription,
			Allow: allow, Deny: deny, Prompts: rc.prompts, Logger: rc.log,
		})
		if hooks.Scope != nil {
			a.scope = hooks.Scope(a.scope)
		}
	}
	var err error
	if a.executor, err = rc.newExecutor(a.model, registry); err != nil {
		return a, err
	}
	a.workflow = agents.NewWorkflowAgent(agents.WorkflowAgentConfig{
		Client: a.model, Model: rc.OpenAIModel, SmallModel: rc.OpenAISmallModel, Prompts: rc.prompts, Logger: rc.log,
		Tools: registry, Policy: rc.files.policy, ToolTimeout: rc.ToolTimeout,
		Profiles: profiles,
	})
	a.summarizer = agents.NewSummarizer(agents.SummarizerConfig{Client: a.model, Model: rc.OpenAISmallModel, Prompts: rc.prompts, Logger: rc.log})
	return a, nil
}

// newExecutor makes the executor of the assistant's answers: ReAct and the planner,
// routed by STRATEGY and STRATEGY_CHANNELS, and, when SCOPE_CLASSIFY_RESULTS is on (by
// default whenever SCOPE_DESCRIPTION is set), the check of the tool results against the
// scope before answering.
func (rc *runConfig) newExecutor(model agents.Completer, registry *agents.Registry) (conversation.Executor, error) {
	react := agents.NewExecutor(agents.ExecutorConfig{
		Client: model, Model: rc.OpenAIModel, Registry: registry, Policy: rc.files.policy, Instructions: rc.files.instructions,
		Prompts: rc.prompts, MaxSteps: rc.MaxSteps, ToolTimeout: rc.ToolTimeout, Logger: rc.log, HoldUnscoped: rc.classifyResults(),
	})
	channels, _ := planner.ParseChannelStrategies(rc.StrategyChannels) // validated by LoadConfig
	strategy, _ := planner.ParseStrategy(rc.Strategy)
	router, err := planner.NewRouter(planner.RouterConfig{
		Client: model, SmallModel: rc.OpenAISmallModel, ReAct: react, Default: strategy, Channels: channels, Prompts: rc.prompts, Logger: rc.log,
		Planner: planner.New(planner.Config{
			Client: model, Model: rc.OpenAIModel, SmallModel: rc.OpenAISmallModel, Executor: react, Prompts: rc.prompts, Logger: rc.log,
		}),
	})
	if err != nil {
		return nil, fmt.Errorf("STRATEGY: %w", err)
	}
	if !rc.classifyResults() {
		return router, nil
	}
	return agents.NewResultScope(router, agents.ResultScopeConfig{
		Client: model, Model: rc.OpenAISmallModel, Description: rc.ScopeDescription, Logger: rc.log}), nil
}

// buildTools returns the registry of the run's tools: the built-in ones, recall
// (docs/tools.md, "Recall"), fetch_url, the tools of MCP_CONFIG's servers, web_search when
// a search provider is configured (searchConfig), and those extra registers (Main.RegisterTools). The knowledge
// base's tool follows once the store is open (registerKnowledge).
//
// The MCP servers' sources, when connected, are returned also with an error: the
// caller closes them once the turns have finished.
func (rc *runConfig) buildTools(ctx context.Context, extra func(*agents.Registry) error) (*agents.Registry, *mcp.Sources, error) {
	r := agents.NewRegistry()
	if err := toolbox.Register(r); err != nil {
		return nil, nil, fmt.Errorf("tools: %w", err)
	}
	if err := r.Register(agents.Recall()); err != nil {
		return nil, nil, fmt.Errorf("tools: %w", err)
	}
	if err := r.Register(web.FetchURLTool(rc.fetchConfig())); err != nil {
		return nil, nil, fmt.Errorf("tools: %w", err)
	}
	var sources *mcp.Sources
	if rc.MCPConfig != "" {
		var err error
		if sources, err = mcp.Connect(ctx, rc.files.mcp, rc.log); err != nil {
			return nil, nil, fmt.Errorf("MCP_CONFIG: %w", err)
		}
		if err := sources.Register(r); err != nil {
			return nil, sources, fmt.Errorf("MCP_CONFIG: %w", err)
		}
	}
	if spec, tool, ok := web.SearchTool(rc.searchConfig()); ok {
		if err := r.Register(spec, tool); err != nil {
			return nil, sources, fmt.Errorf("tools: %w", err)
		}
	}
	if extra != nil {
		if err := extra(r); err != nil {
			return nil, sources, fmt.Errorf("tools: %w", err)
		}
	}
	return r, sources, nil
}

// registerKnowledge registers the tool that searches the knowledge base kb
// (docs/tools.md, "Knowledge base") in r, when there is one.
func registerKnowledge(r *agents.Registry, kb conversation.Knowledge) error {
	if kb == nil {
		return nil
	}
	if err := r.Register(toolbox.KnowledgeTool(kb, toolbox.DefaultKnowledgeLimit)); err != nil {
		return fmt.Errorf("tools: %w", err)
	}
	return nil
}

// searchConfig is web_search's configuration: SEARXNG_URL, BRAVE_SEARCH_API_KEY,
// TAVILY_API_KEY, WEB_SEARCH_PROVIDER and WEB_SEARCH_ENDPOINT (docs/tools.md, "Web
// search").
func (c *Config) searchConfig() web.SearchConfig {
	return web.SearchConfig{Provider: c.WebSearchProvider, SearxngURL: c.SearxngURL,
		BraveAPIKey: c.BraveAPIKey, TavilyAPIKey: c.TavilyAPIKey, Endpoint: c.WebSearchEndpoint}
}

// webSearchConfigured reports whether getenv's SEARXNG_URL, BRAVE_SEARCH_API_KEY
// or TAVILY_API_KEY gives web_search a provider, for commands that load no
// configuration (workflows validate).
func webSearchConfigured(getenv func(string) string) bool {
	c := Config{SearxngURL: getenv("SEARXNG_URL"), BraveAPIKey: getenv("BRAVE_SEARCH_API_KEY"), TavilyAPIKey: getenv("TAVILY_API_KEY")}
	_, _, ok := web.SearchTool(c.searchConfig())
	return ok
}

// validSearchProvider reports whether WEB_SEARCH_PROVIDER, when set, names a
// provider whose URL or key is set.
func (c *Config) validSearchProvider() bool {
	switch strings.ToLower(strings.TrimSpace(c.WebSearchProvider)) {
	case "":
		return true
	case web.ProviderSearXNG:
		return c.SearxngURL != ""
	case web.ProviderBrave:
		return c.BraveAPIKey != ""
	case web.ProviderTavily:
		return c.TavilyAPIKey != ""
	}
	return false
}
