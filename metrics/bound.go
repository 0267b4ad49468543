package metrics

import "sync"

// Other is the label value of whatever a Bound does not allow.
const Other = "other"

// Bound keeps a label's values to a bounded set: the values it was made with, plus,
// when learn is positive, up to learn more values the first time they are seen.
// Anything else, and the empty string, is Other. It is safe for concurrent use.
type Bound struct {
	mu      sync.RWMutex
	allowed map[string]bool
	learn   int // how many more values may still be learned
}

// NewBound returns a Bound that allows values, and learns up to learn others.
func NewBound(learn int, values ...string) *Bound {
	b := &Bound{allowed: make(map[string]bool, len(values)), learn: max(learn, 0)}
	for _, v := range values {
		if v != "" {
			b.allowed[v] = true
		}
	}
	return b
}

// Allow adds values to the set (tools registered at start-up, for example).
func (b *Bound) Allow(values ...string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, v := range values {
		if v != "" {
			b.allowed[v] = true
		}
	}
}

// Value returns v when the set allows it (learning it if there is room), or Other.
func (b *Bound) Value(v string) string {
	if v == "" {
		return Other
	}
	b.mu.RLock()
	ok, room := b.allowed[v], b.learn > 0
	b.mu.RUnlock()
	switch {
	case ok:
		return v
	case !room:
		return Other
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.allowed[v] {
		return v
	}
	if b.learn == 0 {
		return Other
	}
	b.learn--
	b.allowed[v] = true
	return v
}
