package api

import (
	"context"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/deadline"
)

// storeGrace is how long after a store call's deadline the API still waits for its
// answer: a call on a connection that hangs, which lib/pq does not interrupt, is
// given up then (deadline.Answer) and answers as one that did not answer in time.
const storeGrace = 250 * time.Millisecond

// answeringStore is a Store whose calls return by their context's deadline and
// storeGrace, whether or not the store honours it. Every call the API makes has a
// deadline: a write's StoreTimeout or Wait, a GET's StoreTimeout (boundReads).
type answeringStore struct{ next Store }

func (s answeringStore) Load(ctx context.Context, key conversation.Key, recent int) (*conversation.Checkpoint, error) {
	return deadline.Answer(ctx, storeGrace, func(ctx context.Context) (*conversation.Checkpoint, error) {
		return s.next.Load(ctx, key, recent)
	})
}

func (s answeringStore) Runs(ctx context.Context, q conversation.RunQuery) ([]conversation.RunRef, error) {
	return deadline.Answer(ctx, storeGrace, func(ctx context.Context) ([]conversation.RunRef, error) { return s.next.Runs(ctx, q) })
}

func (s answeringStore) Messages(ctx context.Context, key conversation.Key, before int64, limit int, role conversation.Role) ([]conversation.Message, error) {
	return deadline.Answer(ctx, storeGrace, func(ctx context.Context) ([]conversation.Message, error) {
		return s.next.Messages(ctx, key, before, limit, role)
	})
}

func (s answeringStore) Input(ctx context.Context, id string) (conversation.Input, error) {
	return deadline.Answer(ctx, storeGrace, func(ctx context.Context) (conversation.Input, error) { return s.next.Input(ctx, id) })
}

func (s answeringStore) Forwarded(ctx context.Context, id string) ([]conversation.Key, error) {
	return deadline.Answer(ctx, storeGrace, func(ctx context.Context) ([]conversation.Key, error) { return s.next.Forwarded(ctx, id) })
}

// answeringKnowledge is a knowledge base whose calls the API makes return by their
// context's deadline and storeGrace, as answeringStore's do.
type answeringKnowledge struct{ conversation.Knowledge }

func (k answeringKnowledge) ReplaceSource(ctx context.Context, source, hash string, origin conversation.Origin, chunks []conversation.Chunk) (bool, error) {
	return deadline.Answer(ctx, storeGrace, func(ctx context.Context) (bool, error) {
		return k.Knowledge.ReplaceSource(ctx, source, hash, origin, chunks)
	})
}

func (k answeringKnowledge) DeleteSource(ctx context.Context, source string) error {
	_, err := deadline.Answer(ctx, storeGrace, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, k.Knowledge.DeleteSource(ctx, source)
	})
	return err
}

func (k answeringKnowledge) Sources(ctx context.Context) ([]conversation.SourceInfo, error) {
	return deadline.Answer(ctx, storeGrace, k.Knowledge.Sources)
}
