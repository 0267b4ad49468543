package bot

import (
	"context"
	"fmt"
	"time"
)

// DefaultStreamRotation is the age at which a streamed answer continues in a fresh
// message: Slack ends a stream about five minutes after chat.startStream, and later
// appends fail with message_not_in_streaming_state.
const DefaultStreamRotation = 4 * time.Minute

// WithStreamRotation sets the age at which a streamed answer continues in a fresh
// message (default DefaultStreamRotation; after <= 0 keeps it), measured with now
// (nil: time.Now).
func WithStreamRotation(after time.Duration, now func() time.Time) MessengerOption {
	return func(m *Messenger) {
		if after > 0 {
			m.rotate = after
		}
		if now != nil {
			m.now = now
		}
	}
}

// rotateIfOld continues the stream in a fresh message (chat.stopStream, then
// chat.startStream in the same thread) once its message is rotate old, so that no
// append meets Slack's expiry. The message left behind keeps what was appended to it
// and is tagged as a part of the answer that is not its last (Tag.Final false). The
// stop set the thread's agent session active, so the session is set processing again
// (Agent.processingAgain): Slack shows its Stop only while a session is processing.
// Errors: chat.startStream's.
func (s *stream) rotateIfOld(ctx context.Context) error {
	if s.fresh == nil || s.rotate <= 0 || s.now().Sub(s.started) < s.rotate {
		return nil
	}
	tag := s.tag
	tag.Final = false
	_, _, stopErr := s.api.StopStreamContext(ctx, s.channel, s.ts, tagOption(tag, 0, 1))
	if stopErr != nil {
		// Expired already (no append came for five minutes): its text stays.
		s.log.Debug("streamed message not stopped before it continues in a fresh one", "ts", s.ts, "error", stopErr)
	}
	next, err := s.fresh(ctx)
	if err != nil {
		return fmt.Errorf("continue the stream in a fresh message: %w", err)
	}
	s.earlier = append(s.earlier, s.ts)
	s.ts, s.started, s.chars = next.ts, next.started, 0
	// Only a stop that succeeded set the session active; a stream about to end
	// (ending) sets it active again at once.
	if s.rotated != nil && stopErr == nil && !s.ending {
		s.rotated(ctx)
	}
	return nil
}
