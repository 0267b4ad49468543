package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mrkdwn"
	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/metrics"
)

// serviceParts are what the conversation service runs on, built before it.
type serviceParts struct {
	store     conversation.Store
	spool     conversation.Spool // nil: none (the embedded store)
	metrics   *metrics.Metrics   // nil: none
	messenger conversation.Messenger
	agents    agentSet
	// fetcher reads the pages of the workflows' fetch artifacts (Main.Fetcher, or nil
	// for fetch_url's; see sourceFetcher).
	fetcher conversation.SourceFetcher
	// agent serves the agent view (AGENT_SURFACE=agent); nil: the assistant view.
	agent *bot.Agent
	// now is the service's clock (Hooks.Now; nil: time.Now).
	now func() time.Time
	// files reads the files people attach (docs/architecture.md, "Files").
	files conversation.FileReader
}

// newService makes the conversation service on p (docs/architecture.md, "Layers of
// conversation"); it starts no work until its Start.
func (rc *runConfig) newService(p serviceParts) (*service.Service, error) {
	profiles, policy := rc.files.profiles, rc.files.policy
	texting, err := doubleTexting(rc.DoubleTexting, rc.DoubleTextingChannels)
	if err != nil {
		return nil, err
	}
	cfg := service.Config{
		Store:       p.metrics.Store(p.store),
		Metrics:     p.metrics,
		Spool:       p.spool,
		LeaseTTL:    rc.LeaseTTL,
		Messenger:   p.messenger,
		Scope:       p.agents.scope,
		Executor:    p.agents.executor,
		Synthesizer: agents.NewSynthesizer(),
		Workflows:   rc.files.workflows,
		Agent:       p.agents.workflow,
		// An artifact's enhancement pass on a profile MODEL_PROFILES lacks is skipped.
		ProfileDefined:      func(name string) bool { _, ok := profiles[name]; return ok },
		PipelineConcurrency: rc.PipelineConcurrency,
		Fetcher:             sourceFetcher(p.fetcher, rc.Config), // fetch artifacts: fetch_url's guard and limits, or Main.Fetcher
		Files:               p.files,
		FetchAllowed:        func(ch string) bool { return policy.Allows(ch, "fetch_url") },
		// A tool a workflow names that is not configured, or not allowed in the
		// channel, is named on its cards (docs/workflows.md, "Pipelines").
		ToolAvailable: func(ch, name string) bool {
			_, _, ok := p.agents.tools.Lookup(name)
			return ok && policy.Allows(ch, name)
		},
		Approvers:          rc.ApproverUserIDs,
		SuggestedPrompts:   rc.files.suggested,
		Format:             mrkdwn.FromMarkdown,
		Summarizer:         p.agents.summarizer,
		HistoryTokens:      rc.HistoryTokens,
		Logger:             rc.log,
		MaxConcurrentTurns: rc.MaxConcurrentTurns,
		HistoryMessages:    rc.HistoryMessages,
		TurnTimeout:        rc.TurnTimeout,
		NoStreaming:        !rc.StreamAnswers,
		MaxQueuedPerThread: rc.MaxQueuedPerThread,
		MaxQueuedPerUser:   rc.MaxQueuedPerUser,
		UserRate:           rc.UserRate,
		UserBurst:          rc.UserBurst,
		DoubleTexting:      texting,
		MergeWindow:        rc.DoubleTextingWindow,
		Now:                p.now,
		Redact:             rc.scrubber.String,
		Classify:           failureClassifier{modelBases: modelURLs(rc.OpenAIBaseURL, profiles), slackBase: rc.SlackAPIURL}.Classify,
		Model:              rc.OpenAIModel,

		// The usage ledger and the token budgets (docs/operations.md, "Usage, cost and budgets").
		Usage:                     usageStore(p.store),
		BudgetTokensPerUserDay:    rc.BudgetTokensPerUserDay,
		BudgetTokensPerChannelDay: rc.BudgetTokensPerChannelDay,
		Admins:                    rc.Admins,
		WebhookEvents:             len(rc.WebhookURLs) > 0,
	}
	if p.agent != nil && rc.AgentSurface == string(bot.SurfaceAgent) {
		cfg.AgentView, cfg.Viewing, cfg.Sessions = true, p.agent, p.agent
	}
	return service.NewService(cfg)
}

// sourceFetcher is the fetcher of the workflows' fetch artifacts: f when set
// (threadwright dev's offline demo), else fetch_url's, with c's guard and limits
// (FETCH_MAX_BYTES, FETCH_TIMEOUT, FETCH_ALLOW_HOSTS).
func sourceFetcher(f conversation.SourceFetcher, c *Config) conversation.SourceFetcher {
	if f != nil {
		return f
	}
	return web.NewSourceFetcher(c.fetchConfig())
}

// doubleTexting returns the double-texting policy of each thread's channel
// (DOUBLE_TEXTING, DOUBLE_TEXTING_CHANNELS; docs/architecture.md, "Double texting").
// Errors: a setting that names no policy, or a malformed pair.
func doubleTexting(def, channels string) (func(conversation.Key) conversation.DoubleTexting, error) {
	p, err := conversation.ParseDoubleTexting(def)
	if err != nil {
		return nil, fmt.Errorf("DOUBLE_TEXTING: expected interrupt, queue or merge: %w", err)
	}
	byChannel := map[string]conversation.DoubleTexting{}
	if strings.TrimSpace(channels) != "" {
		pairs, bad := agents.ChannelPairs(channels)
		if bad != "" {
			return nil, fmt.Errorf("DOUBLE_TEXTING_CHANNELS: %q: expected channel:policy pairs such as C123:interrupt,C456:queue", bad)
		}
		for _, pair := range pairs {
			cp, err := conversation.ParseDoubleTexting(pair[1])
			if err != nil {
				return nil, fmt.Errorf("DOUBLE_TEXTING_CHANNELS: channel %s: %w", pair[0], err)
			}
			byChannel[pair[0]] = cp
		}
	}
	return func(key conversation.Key) conversation.DoubleTexting {
		if cp, ok := byChannel[key.ChannelID]; ok {
			return cp
		}
		return p
	}, nil
}
