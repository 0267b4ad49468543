package sqlstore

import (
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// The lease methods of conversation.Store, less their SQL (docs/architecture.md,
// "Durable turns"). A thread's lease is a row of the leases table that is never
// deleted while its thread has a conversation or an input, so that its fencing token
// never repeats: Acquire inserts it, or takes it when it is free (owner NULL) or
// expired, incrementing the token; Release frees it. Each function checks its
// arguments, runs the statement the backend passes once, and wraps its errors with
// the thread's key.

// LeaseRow is a held lease as Renew reads it: its key, token and the signals its
// holder was sent (newest, message_seq, message_by, stop_target, stop_by).
type LeaseRow struct {
	TeamID     string `db:"team_id"`
	ChannelID  string `db:"channel_id"`
	ThreadTS   string `db:"thread_ts"`
	Token      int64  `db:"token"`
	Newest     int64  `db:"newest"`
	MessageSeq int64  `db:"message_seq"`
	MessageBy  string `db:"message_by"`
	StopTarget string `db:"stop_target"`
	StopBy     string `db:"stop_by"`
}

// State returns r as the conversation.LeaseState of owner.
func (r LeaseRow) State(owner string) conversation.LeaseState {
	return conversation.LeaseState{
		Lease: conversation.Lease{
			Key:   conversation.Key{TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadTS: r.ThreadTS},
			Owner: owner,
			Token: r.Token,
		},
		Newest:    r.Newest,
		Message:   r.MessageSeq,
		MessageBy: r.MessageBy,
		Stop:      conversation.StopRequest{Target: r.StopTarget, By: r.StopBy},
	}
}

// KeyRow is a thread's key as Orphans reads it.
type KeyRow struct {
	TeamID    string `db:"team_id"`
	ChannelID string `db:"channel_id"`
	ThreadTS  string `db:"thread_ts"`
}

// LeaseTTL returns ttl as leases store it: whole milliseconds, rounded down, and 0
// (a lease that has expired when it is written) for a ttl under a millisecond or
// negative.
func LeaseTTL(ttl time.Duration) time.Duration {
	return max(ttl, 0).Truncate(time.Millisecond)
}

// checkLeaseKey rejects a key no input can have: a thread_ts is optional, as for a
// channel command's input (see Enqueue), the team and channel are not.
func checkLeaseKey(key conversation.Key) error {
	if key.TeamID == "" || key.ChannelID == "" {
		return errors.New("incomplete key")
	}
	return nil
}

// checkLease rejects a zero lease, or one without an owner or a key.
func checkLease(l conversation.Lease) error {
	switch {
	case !l.Held():
		return errors.New("no lease (zero token)")
	case l.Owner == "":
		return errors.New("lease without an owner")
	}
	return checkLeaseKey(l.Key)
}

// Acquire implements conversation.Store.Acquire of thread key for owner: acquire, given
// ttl as LeaseTTL rounds it, inserts the thread's lease row with token 1, or takes the
// row if it is free or expired (incrementing the token, keeping the previous owner in
// prev_owner and clearing the signals), in one statement that returns token and
// prev_owner, or no row when a live lease holds the thread.
func Acquire(key conversation.Key, owner string, ttl time.Duration, acquire func(ttl time.Duration) *sql.Row) (l conversation.Lease, prev string, ok bool, err error) {
	if err := checkLeaseKey(key); err != nil {
		return l, "", false, fmt.Errorf("acquire thread %s: %w", key, err)
	}
	if owner == "" {
		return l, "", false, fmt.Errorf("acquire thread %s: empty owner", key)
	}
	var p sql.NullString
	err = acquire(LeaseTTL(ttl)).Scan(&l.Token, &p)
	if errors.Is(err, sql.ErrNoRows) {
		return conversation.Lease{}, "", false, nil
	}
	if err != nil {
		return conversation.Lease{}, "", false, fmt.Errorf("acquire thread %s: %w", key, err)
	}
	l.Key, l.Owner = key, owner
	return l, p.String, true, nil
}

// AcquireBegin implements conversation.Store.AcquireBegin of thread key for owner, with
// Acquire's checks: acquire, given ttl as LeaseTTL rounds it, takes the lease as
// Acquire's acquire does, scanning its token and previous owner into token and prev,
// and, when it took it, begins the thread's first pending input as Begin's begin does,
// scanning it into row; it reports whether it began one, and sql.ErrNoRows when a
// live lease holds the thread. An input begun whose payload does not decode comes back
// as a *conversation.UndecodableError with the lease, taken (ok true): a backend that
// runs acquire in a transaction commits it all the same.
func AcquireBegin[T Time](key conversation.Key, owner string, ttl time.Duration,
	acquire func(ttl time.Duration, token *int64, prev *sql.NullString, row *InputRow[T]) (found bool, err error),
) (l conversation.Lease, prev string, in *conversation.Input, ok bool, err error) {
	if err := checkLeaseKey(key); err != nil {
		return l, "", nil, false, fmt.Errorf("acquire thread %s: %w", key, err)
	}
	if owner == "" {
		return l, "", nil, false, fmt.Errorf("acquire thread %s: empty owner", key)
	}
	var (
		p   sql.NullString
		row InputRow[T]
	)
	found, err := acquire(LeaseTTL(ttl), &l.Token, &p, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return conversation.Lease{}, "", nil, false, nil
	}
	if err != nil {
		return conversation.Lease{}, "", nil, false, fmt.Errorf("acquire thread %s: %w", key, err)
	}
	l.Key, l.Owner = key, owner
	if !found {
		return l, p.String, nil, true, nil
	}
	row.TeamID, row.ChannelID, row.ThreadTS = key.TeamID, key.ChannelID, key.ThreadTS
	begun, err := row.Input()
	if err != nil {
		// Taken all the same: its holder fails the input and goes on (Store.AcquireBegin).
		return l, p.String, nil, true, fmt.Errorf("acquire thread %s: begin its input: %w", key, err)
	}
	return l, p.String, &begun, true, nil
}

// Begin implements conversation.Store.Begin of l: begin increments the attempts of
// the pending input of l's thread with the lowest seq, if l still holds the thread
// (owner and token), scans it into row and reports whether it found one and whether
// l holds the thread. Errors: conversation.ErrLeaseLost.
func Begin[T Time](l conversation.Lease, begin func(row *InputRow[T]) (found, held bool, err error)) (*conversation.Input, error) {
	if err := checkLease(l); err != nil {
		return nil, fmt.Errorf("begin next input of thread %s: %w", l.Key, err)
	}
	var row InputRow[T]
	found, held, err := begin(&row)
	switch {
	case err != nil:
	case !held:
		err = conversation.ErrLeaseLost
	case !found:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("begin next input of thread %s: %w", l.Key, err)
	}
	in, err := row.Input()
	if err != nil {
		return nil, fmt.Errorf("begin next input of thread %s: %w", l.Key, err)
	}
	return &in, nil
}

// Next implements conversation.Store.Next of l: next begins the pending input of l's
// thread with the lowest seq as Begin's begin does, scanning it into row, or, finding
// none, frees l's lease row as Release's release does; it reports whether it found an
// input, whether l held the thread and whether it freed the lease. Errors:
// conversation.ErrLeaseLost.
func Next[T Time](l conversation.Lease, next func(row *InputRow[T]) (found, held, released bool, err error)) (*conversation.Input, bool, error) {
	if err := checkLease(l); err != nil {
		return nil, false, fmt.Errorf("next input of thread %s: %w", l.Key, err)
	}
	var row InputRow[T]
	found, held, released, err := next(&row)
	switch {
	case err != nil:
	case !held:
		err = conversation.ErrLeaseLost
	case !found:
		return nil, released, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("next input of thread %s: %w", l.Key, err)
	}
	in, err := row.Input()
	if err != nil {
		return nil, false, fmt.Errorf("next input of thread %s: %w", l.Key, err)
	}
	return &in, false, nil
}

// BegunBy returns what an input begun by call of l's holder records as the call that
// began it (inputs.begun_by): the lease's owner and token, and call, which together
// name one call of one holder (conversation.Store.Next). It is "" for call 0 or less,
// which never names a call.
func BegunBy(l conversation.Lease, call int64) string {
	if call <= 0 {
		return ""
	}
	return fmt.Sprintf("%s/%d/%d", l.Owner, l.Token, call)
}

// Release implements conversation.Store.Release of l: release frees l's lease row
// (owner NULL, expired now, signals cleared) if l still holds it and its thread has
// no pending input, and reports whether l held it and whether it freed it. Errors:
// conversation.ErrLeaseLost.
func Release(l conversation.Lease, release func() (held, released bool, err error)) (bool, error) {
	if err := checkLease(l); err != nil {
		return false, fmt.Errorf("release thread %s: %w", l.Key, err)
	}
	held, released, err := release()
	if err == nil && !held {
		err = conversation.ErrLeaseLost
	}
	if err != nil {
		return false, fmt.Errorf("release thread %s: %w", l.Key, err)
	}
	return released, nil
}

// Abandon implements conversation.Store.Abandon of l: abandon frees l's lease row
// (owner NULL, expired now, signals cleared) if l still holds it, whatever is
// pending, and returns the rows it changed. Errors: conversation.ErrLeaseLost.
func Abandon(l conversation.Lease, abandon func() (sql.Result, error)) error {
	if err := checkLease(l); err != nil {
		return fmt.Errorf("abandon thread %s: %w", l.Key, err)
	}
	n, err := RowsAffected(abandon())
	if err == nil && n == 0 {
		err = conversation.ErrLeaseLost
	}
	if err != nil {
		return fmt.Errorf("abandon thread %s: %w", l.Key, err)
	}
	return nil
}

// Renew implements conversation.Store.Renew: renew sets the expiry of every lease row
// of owner to ttl (as LeaseTTL rounds it) from now and returns them (team_id,
// channel_id, thread_ts, token, newest, message_seq, message_by, stop_target,
// stop_by), which Renew reads and closes.
func Renew(owner string, ttl time.Duration, renew func(ttl time.Duration) (*sql.Rows, error)) ([]conversation.LeaseState, error) {
	if owner == "" {
		return nil, errors.New("renew leases: empty owner")
	}
	states, err := renewed(owner, ttl, renew)
	if err != nil {
		return nil, fmt.Errorf("renew leases of %s: %w", owner, err)
	}
	return states, nil
}

func renewed(owner string, ttl time.Duration, renew func(ttl time.Duration) (*sql.Rows, error)) ([]conversation.LeaseState, error) {
	rs, err := renew(LeaseTTL(ttl))
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var states []conversation.LeaseState
	for rs.Next() {
		var r LeaseRow
		if err := rs.Scan(&r.TeamID, &r.ChannelID, &r.ThreadTS, &r.Token, &r.Newest, &r.MessageSeq, &r.MessageBy,
			&r.StopTarget, &r.StopBy); err != nil {
			return nil, err
		}
		states = append(states, r.State(owner))
	}
	return states, rs.Err()
}

// Signal implements conversation.Store.Signal of thread key: signal sets stop_target
// and stop_by to target and by (r's, made storable; both empty for the zero
// StopRequest, which clears the request) on the thread's lease row if it is held.
func Signal(key conversation.Key, r conversation.StopRequest, signal func(target, by string) (sql.Result, error)) error {
	if err := checkLeaseKey(key); err != nil {
		return fmt.Errorf("signal thread %s: %w", key, err)
	}
	if r.Target == "" {
		r.By = ""
	}
	if _, err := signal(Text(r.Target), Text(r.By)); err != nil {
		return fmt.Errorf("signal thread %s: %w", key, err)
	}
	return nil
}

// Orphans implements conversation.Store.Orphans: unless limit is not positive (no
// threads, and no query), query selects into rows the threads that have a pending
// input and no live lease, the thread with the lowest pending seq first, up to limit.
func Orphans(limit int, query func(rows *[]KeyRow) error) ([]conversation.Key, error) {
	if limit <= 0 {
		return nil, nil
	}
	var rows []KeyRow
	if err := query(&rows); err != nil {
		return nil, fmt.Errorf("list orphaned threads: %w", err)
	}
	keys := make([]conversation.Key, len(rows))
	for i, r := range rows {
		keys[i] = conversation.Key{TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadTS: r.ThreadTS}
	}
	return keys, nil
}
