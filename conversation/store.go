package conversation

import (
	"context"
	"time"
)

// Store persists conversations, their messages and the inputs that drive them
// (docs/architecture.md, "Persistence" and "Durable turns"). Implementations:
// store/sqlite (embedded default) and store/postgres; both pass store/storetest. Every
// method is safe for concurrent use. Errors that may go away when retried (a dropped
// connection, a restarting server, too many clients, a busy SQLite file) satisfy
// errors.Is(err, ErrUnavailable).
type Store interface {
	// Load returns the conversation for key with at most recent of its newest messages,
	// oldest first (recent <= 0 loads none). Its cost does not depend on the
	// conversation's length. Errors: ErrNotFound.
	Load(ctx context.Context, key Key, recent int) (*Checkpoint, error)
	// Exists reports whether the bot is part of thread key: a conversation exists for
	// it, or an input for it is pending (a mention whose first turn has not been saved
	// yet), so that a follow-up without a mention is accepted.
	Exists(ctx context.Context, key Key) (bool, error)
	// Save writes turn atomically: it appends turn.Append after the conversation's last
	// message, replaces its state, increments its version, when turn.InputID is set
	// marks that input done, and enqueues turn.Enqueue (as Enqueue, duplicates
	// skipped). turn.Version must equal the stored version (0: the conversation must
	// not exist yet). When turn.Lease is set, it must still hold turn.Key (same owner
	// and fencing token). Its cost does not depend on the conversation's length.
	// Errors, with nothing written: ErrLeaseLost when the lease check fails;
	// ErrConflict when the version check fails, or when turn.InputID (or one of
	// turn.Merged) is set but that input is not pending (already answered, finished or never enqueued).
	Save(ctx context.Context, turn Turn) (Saved, error)
	// Enqueue persists a pending input, numbered with the next Seq (the order in which
	// a thread's inputs run), and tells the holder of the thread's lease, if any
	// (LeaseState.Newest, and LeaseState.Message for a KindUserMessage). It returns
	// false, and changes nothing, when an input with the same ID was already enqueued
	// (whatever its status). Text it cannot store as it is (NUL characters, invalid
	// UTF-8) is stored repaired.
	Enqueue(ctx context.Context, in Input) (bool, error)
	// EnqueueBatch enqueues ins as Enqueue does each, in ONE transaction (the intake's
	// group commit: a burst costs one commit): every input is stored, or found a
	// duplicate, or, on an error, none is. The inputs of one thread are numbered in
	// their order in ins. inserted[i] reports whether ins[i] was new. Postgres runs it
	// on connections of its own, apart from the turns' pool.
	EnqueueBatch(ctx context.Context, ins []Input) (inserted []bool, err error)
	// CountPending counts the pending inputs of thread key and, when userID is not
	// "", those of userID (Input.User) in key's workspace, each up to limit (a count
	// stops there, so its cost is bounded); one indexed query, for Submit's bounds
	// (docs/operations.md, "Limits and secrets"). A pending input counts until it is done, dropped or failed,
	// while it runs too.
	CountPending(ctx context.Context, key Key, userID string, limit int) (PendingCounts, error)
	// Pending returns up to limit pending inputs of thread key, lowest Seq first: the
	// merge policy reads the burst a turn answers from them (DoubleTextingMerge). It
	// stops before the first input whose payload does not decode (its own turn fails
	// it: UndecodableError).
	Pending(ctx context.Context, key Key, limit int) ([]Input, error)
	// Enqueued reports whether an input with id was enqueued, whatever its status:
	// Submit asks before it refuses an input over a limit, since a copy Slack
	// delivered again of an input already stored is a duplicate, never refused.
	Enqueued(ctx context.Context, id string) (bool, error)
	// Amend changes the pending input id (a person's message) before its turn began
	// (Attempts 0), in one conditional write, and reports whether it did: with drop,
	// the input is finished as InputDropped (its message was deleted); otherwise its
	// message's text becomes text (the message was edited). It returns false, changing
	// nothing, when the input is not pending, has begun, or does not exist
	// (docs/architecture.md, "Edits and deletions").
	Amend(ctx context.Context, id, text string, drop bool) (bool, error)

	// Acquire takes the lease of thread key for owner until ttl from now, by the
	// database's clock, unless a live lease holds it. A lease is live until ttl after
	// its last Acquire or Renew; Release frees it. Taking a thread whose lease expired
	// (its holder died or lost the database) increases the fencing token, so that the
	// previous holder's Begin, Finish, Release and Save fail with ErrLeaseLost. A live
	// lease of owner itself (an earlier Acquire whose answer was lost) is taken again,
	// with a new token. It returns ok false, changing nothing, when a live lease of
	// another owner holds the thread; prev is the owner of the lease taken over ("" when
	// the thread was free).
	Acquire(ctx context.Context, key Key, owner string, ttl time.Duration) (l Lease, prev string, ok bool, err error)
	// AcquireBegin is Acquire and, when it takes the lease, Begin with it, as one store
	// call (one statement on Postgres, one transaction on SQLite): a worker's first
	// call on a thread (docs/architecture.md, "Durable turns"). in is the input begun;
	// nil when none is pending, or when another writer holds the first one's row
	// (Postgres; the holder then calls Next, which waits for it). Acquire's and
	// Begin's guarantees hold, but one: when it takes owner's own lease again (prev is
	// owner: an earlier call whose answer was lost, retried), an input begun already
	// (Attempts > 0), which that call began, is returned without counting another
	// attempt. On Postgres the lost call may have begun nothing (another writer held
	// the row) and taken the lease from a holder that had begun the input: the
	// attempt this call makes of it then goes uncounted. When the input begun does not
	// decode, the lease is taken (l, ok true) and err is an *UndecodableError.
	AcquireBegin(ctx context.Context, key Key, owner string, ttl time.Duration) (l Lease, prev string, in *Input, ok bool, err error)
	// Begin starts the next input of l's thread, the pending input with the lowest
	// Seq: it increments the input's Attempts and returns it, or nil when the thread
	// has no pending input. Errors: ErrLeaseLost; *UndecodableError when the input
	// begun does not decode.
	Begin(ctx context.Context, l Lease) (*Input, error)
	// Next is Begin, and Release when Begin finds no pending input, as one store call
	// (one statement on Postgres; on SQLite, whose writes run one at a time, its
	// statements in a row): the worker's call between two turns (docs/architecture.md, "Durable
	// turns"). It returns the input begun; or nil and released true when the thread had
	// no pending input and l is freed; or nil and released false when an input became
	// pending meanwhile, keeping the lease (the holder calls Next again). Ordering,
	// fencing and the guarantee about inputs enqueued concurrently are Begin's and
	// Release's. call numbers the holder's calls under l, from 1: a call retried with
	// the same number (its answer was lost) returns the input that call began without
	// counting another attempt, while the next number, after a turn that failed,
	// counts one; 0 names no call and always counts (docs/architecture.md, "Durable
	// turns"). Errors: ErrLeaseLost; *UndecodableError when the input begun does not
	// decode.
	Next(ctx context.Context, l Lease, call int64) (in *Input, released bool, err error)
	// Release frees l when its thread has no pending input, and reports whether it
	// did; false, keeping the lease, when an input is pending (the holder goes on with
	// it). An input enqueued concurrently is either seen here or finds the lease free.
	// Errors: ErrLeaseLost.
	Release(ctx context.Context, l Lease) (bool, error)
	// Abandon frees l whatever is pending, so that another worker takes the thread at
	// once (its next Orphans finds it): a worker that shuts down hands its threads
	// over. Errors: ErrLeaseLost.
	Abandon(ctx context.Context, l Lease) error
	// Renew extends every lease of owner that no other owner has taken, expired ones
	// included, until ttl from now, and returns their states. A lease of owner missing
	// from the result was taken over.
	Renew(ctx context.Context, owner string, ttl time.Duration) ([]LeaseState, error)
	// Signal records r for the holder of thread key's lease, which reads it with Renew
	// (LeaseState.Stop), replacing the request recorded before; the zero StopRequest
	// clears it (the holder applied it). It does nothing when no lease holds the
	// thread.
	Signal(ctx context.Context, key Key, r StopRequest) error
	// Orphans returns up to limit threads that have pending inputs and no live lease
	// (their holder died, or nobody took them), the thread with the oldest pending
	// input first.
	Orphans(ctx context.Context, limit int) ([]Key, error)
	// Finish sets the status of an input that ends without a Save (dropped or failed).
	// When l is set it must still hold the input's thread. Errors: ErrNotFound,
	// ErrLeaseLost.
	Finish(ctx context.Context, l Lease, id string, status InputStatus) error

	// Workflows lists the conversations of a channel whose workflow is running
	// (State.Workflow.Status workflow.RunRunning), started by startedBy ("" for anyone's),
	// most recently updated first, at most limit.
	Workflows(ctx context.Context, teamID, channelID, startedBy string, limit int) ([]WorkflowRef, error)
	// DeleteIdle deletes conversations (with their messages) not updated since before,
	// and inputs created before it, and free leases of threads with neither; it
	// returns the number of conversations deleted.
	DeleteIdle(ctx context.Context, before time.Time) (int, error)
	// Ping checks the connection to the database.
	Ping(ctx context.Context) error
	// Close releases the store's resources.
	Close() error
}

// PendingCounts are Store.CountPending's counts of pending inputs.
type PendingCounts struct {
	// Thread counts the thread's pending inputs; User the person's, across threads.
	Thread, User int
}

// Spool keeps inputs on local disk while the Store is unavailable, so that an input
// is acknowledged only once it is stored somewhere durable (docs/architecture.md,
// "Accepted means stored"); the Service moves them into the Store, in order, when it
// answers again. store/sqlite implements it (OpenSpool). Every method is safe for
// concurrent use.
type Spool interface {
	// Put stores in durably (synced to disk before it returns), after the inputs
	// spooled before it. It returns false, changing nothing, when an input with the
	// same ID is spooled already.
	Put(ctx context.Context, in Input) (bool, error)
	// Peek returns up to limit spooled inputs, oldest first.
	Peek(ctx context.Context, limit int) ([]Input, error)
	// Get returns spooled input id, and false when it is not spooled.
	Get(ctx context.Context, id string) (Input, bool, error)
	// Remove deletes spooled input id (no error when there is none).
	Remove(ctx context.Context, id string) error
	// Len returns how many inputs are spooled.
	Len(ctx context.Context) (int, error)
	// Close releases the spool's resources.
	Close() error
}

// WorkflowRef names a conversation with a running workflow.
type WorkflowRef struct {
	Key       Key
	Name      string // the workflow's name
	StartedBy string
	UpdatedAt time.Time
}
