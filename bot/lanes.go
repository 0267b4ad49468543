package bot

import (
	"hash/maphash"
	"sync"
)

// intakeLanes is how many envelopes the Bot stores at once: the lanes of the intake.
// Each lane takes its envelopes one at a time, in the order they came, so that a
// thread's inputs (all on the lane of its key) keep their order; envelopes on
// different lanes are stored concurrently, and the store commits those that arrive
// together in one transaction (docs/architecture.md, "Accepted means stored"). A
// lane's envelopes wait for one commit each, so the lanes bound the inputs a commit
// can store: with 64, a burst of 1,000 mentions took 16 commits one after the other
// before the last was acked; with 512, two or three (a lane is a goroutine and a
// channel, about 9 KB).
const intakeLanes = 512

// laneDepth is how many envelopes a lane holds before the event loop waits for it.
const laneDepth = 64

// lanes runs work on a fixed set of goroutines, the work of one key always on the same
// one, in the order it was given.
type lanes struct {
	seed  maphash.Seed
	queue []chan func()
	wg    sync.WaitGroup
}

// startLanes starts n lanes.
func startLanes(n int) *lanes {
	l := &lanes{seed: maphash.MakeSeed(), queue: make([]chan func(), n)}
	for i := range l.queue {
		q := make(chan func(), laneDepth)
		l.queue[i] = q
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for f := range q {
				f()
			}
		}()
	}
	return l
}

// do runs f on the lane of key, after the work given to it before; it waits only
// when that lane is full.
func (l *lanes) do(key string, f func()) {
	l.queue[maphash.String(l.seed, key)%uint64(len(l.queue))] <- f
}

// stop runs the work given so far and returns once it is done; do must not be called
// after it.
func (l *lanes) stop() {
	for _, q := range l.queue {
		close(q)
	}
	l.wg.Wait()
}
