package eval

import (
	"context"
	"log/slog"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
)

// Launcher starts the program under evaluation for one run of a case: the real
// pipeline, in process, connected to the run's emulated Slack. cmd/threadwright
// implements it with its Main, so a run goes through the same wiring as production.
type Launcher interface {
	Launch(ctx context.Context, l Launch) (Bot, error)
}

// Launch is what a run starts the bot with.
type Launch struct {
	// Case and Run name the run (Run from 1).
	Case string
	Run  int
	// SlackURL, BotToken and AppToken connect to the run's emulated Slack
	// (playground/emulator): SLACK_API_URL, SLACK_BOT_TOKEN, SLACK_APP_TOKEN.
	SlackURL, BotToken, AppToken string
	// Dir is the run's own directory, removed after the run: its throwaway store
	// (DATA_DIR) and its files.
	Dir string
	// Settings are the case's settings (environment names to values), over the
	// configured ones.
	Settings map[string]string
	// Logger receives the bot's log.
	Logger *slog.Logger
	// Model wraps every model client of the run (the main model, the small one,
	// the model profiles'); Tool wraps every tool once all are registered; Scope
	// wraps the scope check. They record what the run did.
	Model func(agents.Completer) agents.Completer
	Tool  func(agents.ToolSpec, agents.Tool) agents.Tool
	Scope func(conversation.ScopeChecker) conversation.ScopeChecker
	// RegisterTools adds the case's stub tools after the built-in ones.
	RegisterTools func(*agents.Registry) error
}

// Bot is the program of one run, started by a Launcher.
type Bot interface {
	// Store is the run's conversation store: the runner reads the thread's
	// checkpoint from it.
	Store() conversation.Store
	// Knowledge is the run's own knowledge base, which search_knowledge searches
	// and the case's documents are loaded into; nil when search_knowledge searches
	// a shared one (the configured store's), which a run must not write to.
	Knowledge() conversation.Knowledge
	// Idle blocks until the bot has no input queued or running, or ctx ends.
	Idle(ctx context.Context) error
	// Stop shuts the bot down and waits for it; the error is the run's.
	Stop() error
}
