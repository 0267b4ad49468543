package turns

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
)

// maxUnspoolFailures is how often a spooled input may fail to go into the store for a
// reason other than the store being down before it is dropped.
const maxUnspoolFailures = 5

// spoolReserve is the time Submit keeps, before its deadline, for writing to the
// spool after the store failed.
const spoolReserve = 500 * time.Millisecond

// spoolPut spools in and makes sure the drain runs.
func (s *Runtime) spoolPut(in conversation.Input) (bool, error) {
	s.spoolMu.Lock()
	defer s.spoolMu.Unlock()
	// The spool is local disk; it gets a context of its own, so that an input whose
	// store attempts used up the caller's time is still kept.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	put, err := s.cfg.Spool.Put(ctx, in)
	if err != nil {
		return false, fmt.Errorf("submit %s: spool: %w", in.ID, err)
	}
	if put {
		s.limits.spool(in, 1)
	}
	s.spooling = true
	s.startDrainLocked(s.bgCtx)
	return put, nil
}

// isSpooling reports whether inputs go to the spool.
func (s *Runtime) isSpooling() bool {
	s.spoolMu.Lock()
	defer s.spoolMu.Unlock()
	return s.spooling
}

// startDrainLocked starts the drain unless it runs; spoolMu is held.
func (s *Runtime) startDrainLocked(ctx context.Context) {
	if s.draining {
		return
	}
	s.draining = true
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.drain(ctx)
	}()
}

// drain moves spooled inputs into the store, oldest first, retrying while the store is
// unavailable, until the spool is empty (then new inputs go to the store again) or ctx
// ends.
func (s *Runtime) drain(ctx context.Context) {
	defer func() {
		s.spoolMu.Lock()
		s.draining = false
		s.spoolMu.Unlock()
	}()
	moved := 0
	failures := map[string]int{} // an input's failures other than the store being down
	for ctx.Err() == nil {
		batch, err := s.cfg.Spool.Peek(ctx, 100)
		if err != nil {
			s.log.Error("spool not read; retrying", "error", err)
			if !sleepCtx(ctx, time.Second) {
				return
			}
			continue
		}
		if len(batch) == 0 {
			s.spoolMu.Lock()
			n, err := s.cfg.Spool.Len(ctx)
			if err == nil && n == 0 {
				s.spooling = false
				s.spoolMu.Unlock()
				if moved > 0 {
					s.log.Warn("store available again: spooled inputs moved into it", "count", moved)
				}
				return
			}
			s.spoolMu.Unlock()
			if err != nil && !sleepCtx(ctx, time.Second) {
				return
			}
			continue
		}
		for _, in := range batch {
			err := s.unspool(ctx, in)
			if err != nil && !storeDown(err) && ctx.Err() == nil {
				if failures[in.ID]++; failures[in.ID] >= maxUnspoolFailures {
					// It will never go in: keeping it would hold every later input
					// back in the spool.
					s.log.Error("spooled input cannot be stored; dropped", conversation.LogKeyInput, in.ID, conversation.LogKeyThread, in.Key.String(), "kind", in.Kind, "error", err)
					if err = s.cfg.Spool.Remove(ctx, in.ID); err == nil {
						s.limits.spool(in, -1)
					}
				}
			}
			if err != nil {
				if ctx.Err() == nil {
					s.log.Warn("spooled input not moved yet; retrying", conversation.LogKeyInput, in.ID, "error", err)
				}
				if !sleepCtx(ctx, time.Second) {
					return
				}
				break
			}
			moved++
		}
	}
}

// unspool moves one spooled input into the store: a thread reply without a mention is
// checked then (Submit could not), and one for a thread the bot is not part of is
// dropped.
func (s *Runtime) unspool(ctx context.Context, in conversation.Input) error {
	keep := true
	if m := in.Message; m != nil && !m.Mentioned && !m.Direct && !s.Holds(in.Key) {
		if err := s.retryStore(ctx, "check a spooled input's thread", func(ctx context.Context) error {
			var err error
			keep, err = s.cfg.Store.Exists(ctx, in.Key)
			return err
		}); err != nil {
			return err
		}
	}
	var inserted bool
	if keep {
		if err := s.retryStore(ctx, "store a spooled input", func(ctx context.Context) error {
			var err error
			inserted, err = s.cfg.Store.Enqueue(ctx, in)
			return err
		}); err != nil {
			return err
		}
	}
	if err := s.cfg.Spool.Remove(ctx, in.ID); err != nil {
		return fmt.Errorf("remove from the spool: %w", err)
	}
	s.limits.spool(in, -1)
	if inserted {
		s.notify(in)
	}
	return nil
}

// storable returns in with its texts made storable: NUL characters removed and
// invalid UTF-8 replaced with U+FFFD (a database refuses them; Slack may send them).
func storable(in conversation.Input) conversation.Input {
	if m := in.Message; m != nil {
		c := *m
		c.Text = storableText(c.Text)
		in.Message = &c
	}
	if a := in.Action; a != nil {
		c := *a
		c.Text = storableText(c.Text)
		in.Action = &c
	}
	if cmd := in.Command; cmd != nil {
		c := *cmd
		c.Line = storableText(c.Line)
		in.Command = &c
	}
	return in
}

// storableText returns s without NUL characters and with invalid UTF-8 replaced.
func storableText(s string) string {
	if utf8.ValidString(s) && !strings.ContainsRune(s, 0) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}
