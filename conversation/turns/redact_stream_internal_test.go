package turns

import (
	"context"
	"errors"
	"testing"
)

// appendFailStream is a Stream (no TextStopper) whose Append fails; it records each
// Stop's final.
type appendFailStream struct {
	finals []bool
}

func (s *appendFailStream) Append(context.Context, string) error { return errors.New("internal_error") }
func (s *appendFailStream) Stop(_ context.Context, final bool) (string, error) {
	s.finals = append(s.finals, final)
	return "1.1", nil
}
func (s *appendFailStream) Messages() []string { return []string{"1.1"} }

// TestRedactingStreamFailedAppendStopsNotFinal: a stream that cannot carry text in
// its stop appends the last text first; when that fails, the stop does not tag the
// message final, and the error is returned (the caller replaces the message).
func TestRedactingStreamFailedAppendStopsNotFinal(t *testing.T) {
	st := &appendFailStream{}
	rs := redactingStream{Stream: st, redact: func(s string) string { return s }}
	if _, err := rs.StopWithText(context.Background(), "the tail", true); err == nil {
		t.Error("StopWithText hid the failed append")
	}
	if len(st.finals) != 1 || st.finals[0] {
		t.Errorf("stops' finals %v, want one, not final", st.finals)
	}
}
