package turns

import (
	"testing"
	"time"
)

// TestTokenGiveBack: a token given back (a duplicate input's) is back in its bucket
// exactly, though the bucket was drawn on and refilled after it was taken: at 6 a
// minute, the token taken at t0 and given back after another was taken at t0+1s
// leaves the bucket as if only the second had been taken.
func TestTokenGiveBack(t *testing.T) {
	l := newLimits(6, 2)
	t0 := time.Unix(1e9, 0)
	first, d := l.take("T1", "U1", false, t0)
	if d != 0 {
		t.Fatalf("first token refused (%v)", d)
	}
	if _, d := l.take("T1", "U1", false, t0.Add(time.Second)); d != 0 {
		t.Fatalf("second token refused (%v)", d)
	}
	first.giveBack()
	if _, d := l.take("T1", "U1", false, t0.Add(time.Second)); d != 0 {
		t.Fatalf("the token given back is not there (wait %v)", d)
	}
	// 2 - 1 + 0.1 (a second at 6 a minute) - 1 = 0.1 left: the next is 9 s away
	// (rate's floating point may make it a nanosecond less).
	if _, d := l.take("T1", "U1", false, t0.Add(time.Second)); d < 9*time.Second-time.Millisecond || d > 9*time.Second {
		t.Errorf("next token in %v, want 9s", d)
	}
	token{}.giveBack() // none taken: nothing to give back
}
