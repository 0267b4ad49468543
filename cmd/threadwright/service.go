package main

import (
	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mrkdwn"
	"github.com/threadwright/threadwright/agents/web"
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
}

// newService makes the conversation service on p (docs/architecture.md, "Layers of
// conversation"); it starts no work until its Start.
func (rc *runConfig) newService(p serviceParts) (*service.Service, error) {
	profiles, policy := rc.files.profiles, rc.files.policy
	return service.NewService(service.Config{
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
		Redact:             rc.scrubber.String,
		Classify:           failureClassifier{modelBases: modelURLs(rc.OpenAIBaseURL, profiles), slackBase: rc.SlackAPIURL}.Classify,
		Model:              rc.OpenAIModel,

		// The usage ledger and the token budgets (docs/operations.md, "Usage, cost and budgets").
		Usage:                     usageStore(p.store),
		BudgetTokensPerUserDay:    rc.BudgetTokensPerUserDay,
		BudgetTokensPerChannelDay: rc.BudgetTokensPerChannelDay,
		Admins:                    rc.Admins,
		WebhookEvents:             len(rc.WebhookURLs) > 0,
	})
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
