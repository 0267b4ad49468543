package metrics

import (
	"context"
	"errors"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// Store returns st with every operation of conversation.Store counted and timed
// (threadwright_store_operations_total{op,outcome},
// threadwright_store_operation_duration_seconds{op}); st itself for a nil Metrics.
// Methods of st beyond conversation.Store are not carried over: assert them on st.
func (m *Metrics) Store(st conversation.Store) conversation.Store {
	if m == nil || st == nil {
		return st
	}
	return &measuredStore{Store: st, m: m}
}

// measuredStore is the decorator Store returns. The embedded Store answers any
// method added to the interface later, unmeasured, until it is listed here.
type measuredStore struct {
	conversation.Store
	m *Metrics
}

var _ conversation.Store = (*measuredStore)(nil)

// storeOutcome names err's outcome for the outcome label.
func storeOutcome(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, conversation.ErrNotFound):
		return "not_found"
	case errors.Is(err, conversation.ErrConflict):
		return "conflict"
	case errors.Is(err, conversation.ErrLeaseLost):
		return "lease_lost"
	case errors.Is(err, conversation.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return "canceled"
	default:
		return "error"
	}
}

// observe records operation op that started at start and ended with err.
func (s *measuredStore) observe(op string, start time.Time, err error) {
	s.m.storeOps.WithLabelValues(op, storeOutcome(err)).Inc()
	s.m.storeDuration.WithLabelValues(op).Observe(seconds(time.Since(start)))
}

func (s *measuredStore) Load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error) {
	start := time.Now()
	cp, err := s.Store.Load(ctx, key, recent)
	s.observe("load", start, err)
	return cp, err
}

func (s *measuredStore) Exists(ctx context.Context, key conversation.Key) (bool, error) {
	start := time.Now()
	ok, err := s.Store.Exists(ctx, key)
	s.observe("exists", start, err)
	return ok, err
}

func (s *measuredStore) Save(ctx context.Context, turn conversation.Turn) (conversation.Saved, error) {
	start := time.Now()
	saved, err := s.Store.Save(ctx, turn)
	s.observe("save", start, err)
	return saved, err
}

func (s *measuredStore) Enqueue(ctx context.Context, in conversation.Input) (bool, error) {
	start := time.Now()
	ok, err := s.Store.Enqueue(ctx, in)
	s.observe("enqueue", start, err)
	return ok, err
}

func (s *measuredStore) EnqueueBatch(ctx context.Context, ins []conversation.Input) ([]bool, error) {
	start := time.Now()
	ok, err := s.Store.EnqueueBatch(ctx, ins)
	s.observe("enqueue_batch", start, err)
	return ok, err
}

func (s *measuredStore) CountPending(ctx context.Context, key conversation.Key, userID string, limit int) (conversation.PendingCounts, error) {
	start := time.Now()
	c, err := s.Store.CountPending(ctx, key, userID, limit)
	s.observe("count_pending", start, err)
	return c, err
}

func (s *measuredStore) Enqueued(ctx context.Context, id string) (bool, error) {
	start := time.Now()
	ok, err := s.Store.Enqueued(ctx, id)
	s.observe("enqueued", start, err)
	return ok, err
}

func (s *measuredStore) Amend(ctx context.Context, id, text string, drop bool) (bool, error) {
	start := time.Now()
	ok, err := s.Store.Amend(ctx, id, text, drop)
	s.observe("amend", start, err)
	return ok, err
}

func (s *measuredStore) Acquire(ctx context.Context, key conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, bool, error) {
	start := time.Now()
	l, prev, ok, err := s.Store.Acquire(ctx, key, owner, ttl)
	s.observe("acquire", start, err)
	return l, prev, ok, err
}

func (s *measuredStore) AcquireBegin(ctx context.Context, key conversation.Key, owner string, ttl time.Duration) (conversation.Lease, string, *conversation.Input, bool, error) {
	start := time.Now()
	l, prev, in, ok, err := s.Store.AcquireBegin(ctx, key, owner, ttl)
	s.observe("acquire_begin", start, err)
	return l, prev, in, ok, err
}

func (s *measuredStore) Begin(ctx context.Context, l conversation.Lease) (*conversation.Input, error) {
	start := time.Now()
	in, err := s.Store.Begin(ctx, l)
	s.observe("begin", start, err)
	return in, err
}

func (s *measuredStore) Next(ctx context.Context, l conversation.Lease, call int64) (*conversation.Input, bool, error) {
	start := time.Now()
	in, released, err := s.Store.Next(ctx, l, call)
	s.observe("next", start, err)
	return in, released, err
}

func (s *measuredStore) Release(ctx context.Context, l conversation.Lease) (bool, error) {
	start := time.Now()
	ok, err := s.Store.Release(ctx, l)
	s.observe("release", start, err)
	return ok, err
}

func (s *measuredStore) Abandon(ctx context.Context, l conversation.Lease) error {
	start := time.Now()
	err := s.Store.Abandon(ctx, l)
	s.observe("abandon", start, err)
	return err
}

func (s *measuredStore) Renew(ctx context.Context, owner string, ttl time.Duration) ([]conversation.LeaseState, error) {
	start := time.Now()
	states, err := s.Store.Renew(ctx, owner, ttl)
	s.observe("renew", start, err)
	return states, err
}

func (s *measuredStore) Signal(ctx context.Context, key conversation.Key, r conversation.StopRequest) error {
	start := time.Now()
	err := s.Store.Signal(ctx, key, r)
	s.observe("signal", start, err)
	return err
}

func (s *measuredStore) Orphans(ctx context.Context, limit int) ([]conversation.Key, error) {
	start := time.Now()
	keys, err := s.Store.Orphans(ctx, limit)
	s.observe("orphans", start, err)
	return keys, err
}

func (s *measuredStore) Finish(ctx context.Context, l conversation.Lease, id string, status conversation.InputStatus) error {
	start := time.Now()
	err := s.Store.Finish(ctx, l, id, status)
	s.observe("finish", start, err)
	return err
}

func (s *measuredStore) Workflows(ctx context.Context, teamID, channelID, startedBy string, limit int) ([]conversation.WorkflowRef, error) {
	start := time.Now()
	refs, err := s.Store.Workflows(ctx, teamID, channelID, startedBy, limit)
	s.observe("workflows", start, err)
	return refs, err
}

func (s *measuredStore) DeleteIdle(ctx context.Context, before time.Time) (int, error) {
	start := time.Now()
	n, err := s.Store.DeleteIdle(ctx, before)
	s.observe("delete_idle", start, err)
	return n, err
}

func (s *measuredStore) Ping(ctx context.Context) error {
	start := time.Now()
	err := s.Store.Ping(ctx)
	s.observe("ping", start, err)
	return err
}
