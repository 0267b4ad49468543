package turns

import (
	"crypto/rand"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Defaults of Config.
const (
	// DefaultMaxConcurrentTurns is the default of Config.MaxConcurrentTurns: turns
	// wait on the model and Slack most of their time, so a process runs many at once,
	// a burst of 1,000 threads without queueing; a turn that waits holds tens of KiB,
	// so 2,000 hold about 100 MiB.
	DefaultMaxConcurrentTurns = 2000
	// DefaultLeaseTTL is how long a lease lives without renewal: a dead replica's
	// threads are taken over after at most this plus one sweep interval.
	DefaultLeaseTTL = 10 * time.Second
	// DefaultFinalTimeout bounds the final writes of a turn (its reply, cards, save),
	// store retries included: long enough to ride out a database restart.
	DefaultFinalTimeout = 2 * time.Minute
	// DefaultNoticeInterval is the default of Config.NoticeInterval.
	DefaultNoticeInterval = time.Minute
	// DefaultDoubleTexting is the policy of a channel Config.DoubleTexting names none
	// for: merge, so that a person who types a question in a few short messages gets
	// one answer to all of it (docs/architecture.md, "Double texting").
	DefaultDoubleTexting = conversation.DoubleTextingMerge
	// DefaultMergeWindow is the default of Config.MergeWindow.
	DefaultMergeWindow = 2 * time.Second
)

// Config configures a Runtime. Store and Messenger are required.
type Config struct {
	Store     conversation.Store
	Messenger conversation.Messenger
	Logger    *slog.Logger
	// Metrics, when set, is told of turns and queueing.
	Metrics conversation.Metrics
	// Spool, when set, keeps inputs on local disk while the Store is unavailable
	// (docs/architecture.md, "Accepted means stored"); nil: Submit fails then, and
	// the caller does not acknowledge the event.
	Spool conversation.Spool
	// MaxConcurrentTurns bounds the turns running at once in this process, across
	// threads (default DefaultMaxConcurrentTurns). Inputs of one thread always run
	// one at a time, in order, across all replicas.
	MaxConcurrentTurns int
	// HistoryMessages is how many of the newest stored messages a turn loads
	// (default 40).
	HistoryMessages int
	// TurnTimeout bounds one turn (default 5 minutes); MaxAttempts is how many times
	// an input is tried, across restarts and replicas, before it is given up with a
	// message to the person (default 3).
	TurnTimeout time.Duration
	MaxAttempts int
	// LeaseTTL is how long a thread's lease lives without renewal (default
	// DefaultLeaseTTL): a dead replica's threads are taken over within it plus one
	// sweep (LeaseTTL/5). Leases are renewed every LeaseTTL/10.
	LeaseTTL time.Duration
	// FinalTimeout bounds the final writes of a turn (its reply, cards and save,
	// with store retries), which run on a context detached from the turn's (default
	// DefaultFinalTimeout).
	FinalTimeout time.Duration
	// MaxQueuedPerThread and MaxQueuedPerUser bound the pending inputs of a thread
	// and of a person, counted in the store (0: no bound); UserRate and UserBurst are
	// a person's token bucket, per minute (0: no limit); NoticeInterval is the least
	// time between two notices to one person (default DefaultNoticeInterval). See
	// limits.go and docs/operations.md, "Limits and secrets".
	MaxQueuedPerThread int
	MaxQueuedPerUser   int
	UserRate           float64
	UserBurst          int
	NoticeInterval     time.Duration
	// DoubleTexting, when set, returns the policy of thread key's channel for a
	// person's message that arrives while a turn of the thread runs or waits (""
	// and nil: DefaultDoubleTexting); MergeWindow is how long the merge policy waits
	// after a person's newest message for their next one (default
	// DefaultMergeWindow). See burst.go.
	DoubleTexting func(key conversation.Key) conversation.DoubleTexting
	MergeWindow   time.Duration
	// Redact, when set, scrubs configured secrets out of every text sent to the chat.
	Redact func(string) string
	// Sessions, when set, sets the agent session of every thread a turn works in
	// (session.go); nil: none are set.
	Sessions conversation.Sessions
	// Owner names this process in its leases (default: host name and process id).
	// The runtime adds a random suffix, so that the name in its leases is unique to
	// this start even when Owner is kept across restarts: a lease taken again by its
	// own owner is taken as a lost answer retried, and its input's attempt is not
	// counted again (Store.AcquireBegin), so a name shared by two starts would let an
	// input that crashes the process run for ever. Now is the clock (default
	// time.Now).
	Owner string
	Now   func() time.Time
	// Model names the main model, under which a turn's unmetered usage is recorded.
	Model string
	// Events, when set, returns the webhook events of a save that changes the
	// state of thread key from prev (as last loaded or saved) to next, caused by
	// actor at now; Save writes them in its transaction (Turn.Events).
	Events func(key conversation.Key, prev, next conversation.State, actor string, now time.Time) []conversation.Event
}

// withDefaults returns cfg with its defaults filled in, its Store traced
// (trace.go) and its Messenger scrubbing secrets and naming the HTTP API's tokens
// as people can read them (redact.go).
func (cfg Config) withDefaults() Config {
	setDefault(&cfg.MaxConcurrentTurns, DefaultMaxConcurrentTurns)
	setDefault(&cfg.HistoryMessages, 40)
	setDefault(&cfg.TurnTimeout, 5*time.Minute)
	setDefault(&cfg.MaxAttempts, 3)
	setDefault(&cfg.LeaseTTL, DefaultLeaseTTL)
	setDefault(&cfg.FinalTimeout, DefaultFinalTimeout)
	setDefault(&cfg.NoticeInterval, DefaultNoticeInterval)
	setDefault(&cfg.MergeWindow, DefaultMergeWindow)
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = noMetrics{}
	}
	cfg.Store = tracedStore{cfg.Store}
	rewrite := apiActors
	if redact := cfg.Redact; redact != nil {
		rewrite = func(s string) string { return redact(apiActors(s)) }
	}
	cfg.Messenger = redactMessenger(cfg.Messenger, rewrite)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	cfg.Owner = startOwner(cfg.Owner)
	return cfg
}

// startOwner returns the lease owner name of this start: name (by default the host
// name and process id) and a random suffix, unique to the start.
func startOwner(name string) string {
	if name == "" {
		host, _ := os.Hostname()
		name = fmt.Sprintf("%s/%d", host, os.Getpid())
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%x", name, b)
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
