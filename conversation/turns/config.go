package turns

import (
	"log/slog"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Config configures a Runtime. Store, Messenger and Handler are required.
type Config struct {
	// Handler runs each input's turn.
	Handler   Handler
	Store     conversation.Store
	Messenger conversation.Messenger
	Logger    *slog.Logger
	// Metrics, when set, is told of turns and queueing.
	Metrics conversation.Metrics
	// Spool, when set, keeps inputs on local disk while the Store is unavailable
	// (docs/architecture.md, "Accepted means stored").
	Spool conversation.Spool
	// MaxConcurrentTurns bounds the turns running at once in this process (default
	// DefaultMaxConcurrentTurns).
	MaxConcurrentTurns int
	// HistoryMessages is how many of the newest stored messages a turn loads.
	HistoryMessages int
	// TurnTimeout bounds one turn; MaxAttempts is how many times an input is tried.
	TurnTimeout time.Duration
	MaxAttempts int
	// LeaseTTL is how long a thread's lease lives without renewal (default
	// DefaultLeaseTTL); FinalTimeout bounds the final writes of a turn (default
	// DefaultFinalTimeout).
	LeaseTTL     time.Duration
	FinalTimeout time.Duration
	// The flood limits of Submit (limits.go).
	MaxQueuedPerThread int
	MaxQueuedPerUser   int
	UserRate           float64
	UserBurst          int
	NoticeInterval     time.Duration
	// Redact scrubs configured secrets out of every text sent to the chat.
	Redact func(string) string
	// Owner names this process in its leases; Now is the clock.
	Owner string
	Now   func() time.Time
	// Model names the main model, under which a turn's unmetered usage is recorded.
	Model string
	// Events, when set, returns the webhook events of a save that changes the
	// state of thread key from prev (as last loaded or saved) to next, caused by
	// actor at now; Save writes them in its transaction (Turn.Events).
	Events func(key conversation.Key, prev, next conversation.State, actor string, now time.Time) []conversation.Event
}
