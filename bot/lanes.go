package bot

import "sync"

// maxQueued bounds the envelopes the intake holds at once, waiting for their store or
// being stored, across all threads: the event loop waits for room beyond it, so a
// flood is bounded in memory (an envelope, parsed, is about 14 KB; a thread's lane a
// goroutine of a few KB) and Slack's redelivery, not this process, holds the rest.
const maxQueued = 4096

// lanes runs work in the order it was given for one key, and the work of different
// keys concurrently: each key with work has a lane, a goroutine of its own that ends
// once its queue is empty (docs/architecture.md, "Accepted means stored"). A thread's
// envelopes share the lane of its key, so its inputs keep their order of arrival; an
// envelope never waits behind another thread's while the lanes hold fewer than their
// maximum (one thread's flood may fill them; the flood limits refuse most of it
// without a commit). With lanes hashed onto a fixed set of goroutines instead,
// threads sharing one waited for each other's commits: in a burst of 1,000 mentions,
// 60 to 120 ms at p99.
type lanes struct {
	// room holds a token for each envelope queued or running: do waits for room.
	room chan struct{}
	wg   sync.WaitGroup

	mu sync.Mutex
	// queued holds, for each key with a lane, the work given after what the lane runs.
	queued map[string][]func()
}

// startLanes returns lanes holding at most max envelopes at once.
func startLanes(max int) *lanes {
	return &lanes{room: make(chan struct{}, max), queued: map[string][]func(){}}
}

// do runs f on the lane of key, after the work given to it before; it waits only
// while the lanes hold their maximum.
func (l *lanes) do(key string, f func()) {
	l.room <- struct{}{}
	l.mu.Lock()
	defer l.mu.Unlock()
	if q, ok := l.queued[key]; ok {
		l.queued[key] = append(q, f)
		return
	}
	l.queued[key] = nil
	l.wg.Add(1)
	go l.run(key, f)
}

// run runs f, then the work queued for key, until there is none: the lane ends.
func (l *lanes) run(key string, f func()) {
	defer l.wg.Done()
	for f != nil {
		f()
		<-l.room
		l.mu.Lock()
		f = nil
		if q := l.queued[key]; len(q) > 0 {
			// The slot let go, so that the envelope's memory is freed as it is done
			// rather than when the lane ends: room bounds memory only then.
			f, q[0] = q[0], nil
			l.queued[key] = q[1:]
		} else {
			delete(l.queued, key)
		}
		l.mu.Unlock()
	}
}

// stop returns once the work given so far is done; do must not be called after it.
func (l *lanes) stop() { l.wg.Wait() }
