package api

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/danielgtaylor/huma/v2"

	"github.com/threadwright/threadwright/conversation"
)

// What the writes share (actions, cancel, start): keeping their input and waiting
// for its turn (docs/api.md, the HTTP API).

// input is Store.Input, with an input whose payload does not decode given without
// it and no error: its status is right, and it matches no start (sameStart).
func (s *Server) input(ctx context.Context, id string) (conversation.Input, error) {
	in, err := s.cfg.Store.Input(ctx, id)
	if ue := (*conversation.UndecodableError)(nil); errors.As(err, &ue) {
		return ue.Input, nil
	}
	return in, err
}

// submit submits in, within Config.StoreTimeout. For an input with an
// Idempotency-Key (keyedPrefix) that the store holds already, it returns that input
// as prior, for the caller to compare: the request is a repeat. Errors: 503 when
// it was not confirmed kept in time (the store is down or hangs and nothing could
// spool it, the service shuts down; the store may still take it), or when a keyed
// input not taken could not be looked up; 429 when a limit refused it.
func (s *Server) submit(ctx context.Context, in conversation.Input) (prior *conversation.Input, err error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.StoreTimeout)
	defer cancel()
	keyed := strings.HasPrefix(in.ID, keyedPrefix)
	accepted, err := s.cfg.Submitter.Submit(ctx, in)
	switch {
	case err != nil:
		s.log.Warn("api: input not kept", "input_id", in.ID, "error", err)
		// The store may still take it (a transaction that ends after the deadline, a
		// commit whose answer was lost): it then runs as any other.
		if keyed {
			return nil, huma.Error503ServiceUnavailable("the request could not be confirmed stored in time (input " + in.ID +
				"); it may still take effect: send it again with the same Idempotency-Key, which starts at most one run")
		}
		return nil, huma.Error503ServiceUnavailable("the request could not be confirmed stored in time (input " + in.ID +
			"); it may still take effect: look at the run or its thread before you try again")
	case accepted:
		return nil, nil
	case keyed:
		return s.repeatOf(ctx, in.ID)
	}
	return nil, huma.Error429TooManyRequests("refused by the flood limits; try again later")
}

// poll calls done every 100 ms until it reports true, or Config.Wait (or ctx) ends.
// A call that fails is tried again after a backoff (100 ms, about doubling, up to 5 s), so
// that a store failing for a moment does not end the wait. The end of the wait is
// not an error: poll returns the last call's error when that call failed, nil
// otherwise.
func (s *Server) poll(ctx context.Context, done func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Wait)
	defer cancel()
	retry := backoff.NewExponentialBackOff(backoff.WithInitialInterval(100*time.Millisecond), backoff.WithMultiplier(2),
		backoff.WithMaxInterval(5*time.Second), backoff.WithMaxElapsedTime(0))
	var last error
	for {
		ok, err := done(ctx)
		last = err
		switch {
		case ok:
			return nil
		case ctx.Err() != nil:
			return last // the wait ended during the call
		}
		wait := 100 * time.Millisecond
		if err != nil {
			wait = retry.NextBackOff()
		} else {
			retry.Reset()
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return last
		case <-t.C:
		}
	}
}

// SpoolReader is a Submitter that gives the inputs waiting in its local spool for
// the store (conversation/service.Service is one: docs/architecture.md, "Accepted
// means stored"). Spooled returns nil when the spool does not hold input id.
type SpoolReader interface {
	Spooled(ctx context.Context, id string) (*conversation.Input, error)
}

// repeatOf looks up input id, a start with an Idempotency-Key that the Submitter
// did not take: a repeat of an input kept before (the intake takes an id once), or a
// refusal of the flood limits. It returns the input kept, from the store or from
// this process's spool (SpoolReader). Errors: 503 when the store cannot say; 429
// for a refusal, or an input another replica spooled and has not stored yet.
func (s *Server) repeatOf(ctx context.Context, id string) (*conversation.Input, error) {
	sp, _ := s.cfg.Submitter.(SpoolReader)
	for range 2 {
		got, err := s.input(ctx, id)
		switch {
		case err == nil:
			return &got, nil
		case !errors.Is(err, conversation.ErrNotFound):
			s.log.Warn("api: a keyed input not taken, not looked up", "input_id", id, "error", err)
			return nil, huma.Error503ServiceUnavailable("the store did not say whether input " + id +
				" was kept before; send the request again with the same Idempotency-Key")
		case sp != nil:
			if in, err := sp.Spooled(ctx, id); err != nil {
				s.log.Warn("api: a keyed input not taken, not looked up in the spool", "input_id", id, "error", err)
			} else if in != nil {
				return in, nil
			}
		}
		// In neither: refused, or the spool's drain stored it between the two
		// looks: the store is asked once more.
	}
	return nil, huma.Error429TooManyRequests("refused by the flood limits, or kept by another replica a moment ago and not stored yet; " +
		"try again later with the same Idempotency-Key")
}
