package turns

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// batchStore records the batches of EnqueueBatch; the first waits for release.
type batchStore struct {
	conversation.Store
	release chan struct{}
	first   chan struct{} // closed when the first batch is in EnqueueBatch
	once    sync.Once
	poison  string
	// deadlines makes EnqueueBatch fail as a store does when its context is done.
	deadlines bool
	mu        sync.Mutex
	batches   [][]string
	seen      map[string]bool
}

func (s *batchStore) EnqueueBatch(ctx context.Context, ins []conversation.Input) ([]bool, error) {
	s.once.Do(func() {
		close(s.first)
		<-s.release
	})
	if err := ctx.Err(); s.deadlines && err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	out := make([]bool, len(ins))
	for i, in := range ins {
		if in.ID == s.poison {
			return nil, errors.New("value too long")
		}
		ids = append(ids, in.ID)
		out[i] = !s.seen[in.ID]
	}
	for _, id := range ids {
		s.seen[id] = true
	}
	s.batches = append(s.batches, ids)
	return out, nil
}

func newBatchStore() *batchStore {
	return &batchStore{release: make(chan struct{}), first: make(chan struct{}), seen: map[string]bool{}}
}

// commit stores batch as run does, by the batch's deadline (groupCommit.deadline).
func (g *groupCommit) commit(batch []*queuedInput) {
	g.commitBy(batch, g.deadline(batch), false)
}

func testCommit(st conversation.Store) *groupCommit {
	return newGroupCommit(&env{cfg: Config{Store: st, Now: time.Now}, log: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// TestGroupCommit: the inputs handed over while a batch is being stored go into the
// store together, in the next batch, in the order they were handed over, each
// reported as new once (a duplicate in the batch as not new).
func TestGroupCommit(t *testing.T) {
	st := newBatchStore()
	g := testCommit(st)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	in := func(id string) conversation.Input { return conversation.Input{ID: id} }

	firstDone := make(chan bool, 1)
	go func() {
		stored := false
		r := g.store(ctx, in("first"), func() { stored = true })
		firstDone <- r.inserted && stored
	}()
	<-st.first
	const n = 20
	results := make(chan string, n)
	for i := range n {
		id := fmt.Sprintf("in%02d", i)
		// One at a time into the queue, so that its order is known.
		go func() {
			if r := g.store(ctx, in(id), nil); r.err != nil || !r.inserted {
				results <- fmt.Sprintf("%s: %v, %v", id, r.inserted, r.err)
				return
			}
			results <- ""
		}()
		waitQueue(t, g, i+1)
	}
	close(st.release)
	if !<-firstDone {
		t.Error("first input reported a duplicate, or stored before its stored callback ran")
	}
	for range n {
		if r := <-results; r != "" {
			t.Error(r)
		}
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if len(st.batches) != 2 || len(st.batches[1]) != n {
		t.Fatalf("batches %v; want [first] and the %d inputs that waited, in one", st.batches, n)
	}
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf("in%02d", i)
	}
	if !slices.Equal(st.batches[1], want) {
		t.Errorf("second batch %v; want the inputs in the order they came", st.batches[1])
	}
}

// TestGroupCommitPoison: when the store refuses one input of a batch (not as
// unavailable), the others are stored without it, one at a time, and only it fails.
func TestGroupCommitPoison(t *testing.T) {
	st := newBatchStore()
	st.poison = "bad"
	g := testCommit(st)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	go func() { g.store(ctx, conversation.Input{ID: "first"}, nil) }()
	<-st.first
	errs := make(chan error, 3)
	for i, id := range []string{"a", "bad", "b"} {
		go func() {
			err := g.store(ctx, conversation.Input{ID: id}, nil).err
			if (err != nil) != (id == "bad") {
				errs <- fmt.Errorf("%s: %v", id, err)
				return
			}
			errs <- nil
		}()
		waitQueue(t, g, i+1)
	}
	close(st.release)
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if !st.seen["a"] || !st.seen["b"] || st.seen["bad"] {
		t.Errorf("stored %v; want a and b", st.seen)
	}
}

// waitQueue waits until n inputs wait in g's queue.
func waitQueue(t *testing.T, g *groupCommit, n int) {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		g.mu.Lock()
		got := len(g.queue)
		if g.grew == nil {
			g.grew = make(chan struct{})
		}
		grew := g.grew
		g.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-grew:
		case <-timeout:
			t.Fatalf("%d inputs queued; want %d", got, n)
		}
	}
}

// TestGroupCommitGathersABusyIntake: inputs that come while others are being stored
// (a burst) wait commitDelay for one another and go in one batch; an input that comes
// to a quiet intake, or once the one before it is stored (one thread's, one after
// another), is stored at once; different threads' inputs coming one after another
// wait commitDelay for others once busyThreads came within busyGap (a burst, each
// stored before the next comes), not before (steady traffic).
func TestGroupCommitGathersABusyIntake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := newBatchStore()
		g := testCommit(st)
		in := func(id string) conversation.Input { return conversation.Input{ID: id} }
		store := func(id string) {
			if err := g.store(t.Context(), in(id), nil).err; err != nil {
				t.Error(err)
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() { store("first") })
		<-st.first // first is being stored: second comes meanwhile (a burst)
		wg.Go(func() { store("second") })
		waitQueue(t, g, 1)
		close(st.release)
		start := time.Now()
		wg.Go(func() { store("third") }) // comes while second waits for more
		wg.Wait()
		if waited := time.Since(start); waited != commitDelay {
			t.Errorf("the burst's batch waited %v; want commitDelay, %v", waited, commitDelay)
		}
		<-time.After(busyGap) // the intake goes quiet
		start = time.Now()
		for _, id := range []string{"alone", "next", "last"} {
			store(id) // one after another, as one thread's are
		}
		if waited := time.Since(start); waited != 0 {
			t.Errorf("one thread's inputs, one after another, waited %v for their batches; want none", waited)
		}
		<-time.After(busyGap)
		start = time.Now()
		threads := func(from, to int) {
			for i := from; i < to; i++ { // each stored before the next comes
				if err := g.store(t.Context(), conversation.Input{ID: fmt.Sprintf("thread%d", i), Key: conversation.Key{ThreadTS: fmt.Sprint(i)}}, nil).err; err != nil {
					t.Fatal(err)
				}
			}
		}
		threads(0, busyThreads-1)
		if waited := time.Since(start); waited != 0 {
			t.Errorf("%d threads' inputs one after another waited %v; want none (steady traffic)", busyThreads-1, waited)
		}
		threads(busyThreads-1, busyThreads+2)
		if waited := time.Since(start); waited != 3*commitDelay {
			t.Errorf("the %d threads' inputs after them waited %v; want commitDelay each, %v (a burst)", 3, waited, 3*commitDelay)
		}
		st.mu.Lock()
		defer st.mu.Unlock()
		want := [][]string{{"first"}, {"second", "third"}, {"alone"}, {"next"}, {"last"}}
		for i := range busyThreads + 2 {
			want = append(want, []string{fmt.Sprintf("thread%d", i)})
		}
		if !slices.EqualFunc(st.batches, want, slices.Equal) {
			t.Errorf("batches %v; want %v", st.batches, want)
		}
	})
}

// TestGroupCommitExpiredInputRidesAlong: an input whose time is up (it waited long
// for its turn to be handed over) is stored with its batch rather than failing the
// batch's other inputs with its deadline; alone, it fails at once.
func TestGroupCommitExpiredInputRidesAlong(t *testing.T) {
	st := newBatchStore()
	close(st.release)
	st.deadlines = true
	g := testCommit(st)
	expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	live, cancelLive := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelLive()
	batch := []*queuedInput{
		{ctx: expired, in: conversation.Input{ID: "late"}, done: make(chan commitResult, 1)},
		{ctx: live, in: conversation.Input{ID: "fresh"}, done: make(chan commitResult, 1)},
	}
	g.commit(batch)
	for _, q := range batch {
		if r := <-q.done; r.err != nil || !r.inserted {
			t.Errorf("%s: inserted %v, error %v; want stored", q.in.ID, r.inserted, r.err)
		}
	}
	alone := &queuedInput{ctx: expired, in: conversation.Input{ID: "alone"}, done: make(chan commitResult, 1)}
	g.commit([]*queuedInput{alone})
	if r := <-alone.done; r.err == nil {
		t.Error("an input whose time is up, alone, was stored; want its deadline's error")
	}
	// Cancelled before its deadline (a stopped turn's forwarded command): alone, it
	// is tried once, for minAttempt, not until that deadline: stored here.
	cancelled, cancelNow := context.WithTimeout(context.Background(), time.Hour)
	cancelNow()
	gone := &queuedInput{ctx: cancelled, in: conversation.Input{ID: "gone"}, done: make(chan commitResult, 1)}
	if d := g.deadline([]*queuedInput{gone}); time.Until(d) > minAttempt {
		t.Errorf("an input whose caller is gone may retry for %v; want minAttempt at most", time.Until(d))
	}
	g.commit([]*queuedInput{gone})
	if r := <-gone.done; r.err != nil || !r.inserted {
		t.Errorf("an input whose caller is gone, alone, with the store up: inserted %v, error %v; want it stored", r.inserted, r.err)
	}
	// A batch the store refuses for one input is stored one input at a time, by the
	// batch's deadline: the input whose time is up still rides along.
	st.poison = "bad"
	split := []*queuedInput{
		{ctx: expired, in: conversation.Input{ID: "late2"}, done: make(chan commitResult, 1)},
		{ctx: live, in: conversation.Input{ID: "bad"}, done: make(chan commitResult, 1)},
		{ctx: live, in: conversation.Input{ID: "fresh2"}, done: make(chan commitResult, 1)},
	}
	g.commit(split)
	for _, q := range split {
		r := <-q.done
		if stored := r.err == nil && r.inserted; stored != (q.in.ID != "bad") {
			t.Errorf("%s in a batch the store refused for bad: inserted %v, error %v; want stored unless bad", q.in.ID, r.inserted, r.err)
		}
	}
}

// unavailableStore fails every batch as unavailable, and records when each was
// tried and with which inputs.
type unavailableStore struct {
	conversation.Store
	mu    sync.Mutex
	tried map[string]time.Time // first attempt of each input
}

func (s *unavailableStore) EnqueueBatch(ctx context.Context, ins []conversation.Input) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, in := range ins {
		if _, ok := s.tried[in.ID]; !ok {
			s.tried[in.ID] = time.Now()
		}
	}
	return nil, errors.Join(ctx.Err(), conversation.ErrUnavailable)
}

// nopSpool is a configured spool that commit never calls.
type nopSpool struct{ conversation.Spool }

// TestGroupCommitNearDeadlineRidesAlong: an input whose deadline is closer than
// spoolReserve plus minAttempt does not fail its batch's other inputs: the batch is
// tried for minAttempt at least, and stores them all.
func TestGroupCommitNearDeadlineRidesAlong(t *testing.T) {
	st := newBatchStore()
	close(st.release)
	st.deadlines = true
	g := testCommit(st)
	g.cfg.Spool = nopSpool{}
	near, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	live, cancelLive := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancelLive()
	batch := []*queuedInput{
		{ctx: near, in: conversation.Input{ID: "near"}, done: make(chan commitResult, 1)},
		{ctx: live, in: conversation.Input{ID: "fresh"}, done: make(chan commitResult, 1)},
	}
	g.commit(batch)
	for _, q := range batch {
		if r := <-q.done; r.err != nil || !r.inserted {
			t.Errorf("%s: inserted %v, error %v; want stored", q.in.ID, r.inserted, r.err)
		}
	}
}

// TestGroupCommitBoundsABatchRetry: while the store is unavailable, a batch none of
// whose callers set a deadline (an API request) retries for maxBatchRetry, not for
// its caller's whole time, so that a Slack input queued behind it is tried, and
// told, before its ack is due. With a spool, the API caller is told then (it is
// spooled); without one, it queues again until batchTimeout.
func TestGroupCommitBoundsABatchRetry(t *testing.T) {
	for _, spool := range []bool{true, false} {
		t.Run(fmt.Sprintf("spool=%v", spool), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				st := &unavailableStore{tried: map[string]time.Time{}}
				g := testCommit(st)
				if spool {
					g.cfg.Spool = nopSpool{}
				}
				start := time.Now()
				apiDone := make(chan time.Duration, 1)
				go func() {
					if err := g.store(context.Background(), conversation.Input{ID: "api"}, nil).err; !storeDown(err) {
						t.Errorf("api input: error %v; want the store's unavailability", err)
					}
					apiDone <- time.Since(start)
				}()
				synctest.Wait() // its batch is retrying
				ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
				defer cancel()
				slackStart := time.Now()
				if err := g.store(ctx, conversation.Input{ID: "slack"}, nil).err; !storeDown(err) {
					t.Errorf("slack input: error %v; want the store's unavailability", err)
				}
				// With a spool, it is told by its deadline (and spooled); without one, it
				// queues again while its time lasts, and may wait out one more batch.
				if told, want := time.Since(slackStart), map[bool]time.Duration{true: 2500 * time.Millisecond, false: 2500*time.Millisecond + maxBatchRetry}[spool]; told > want {
					t.Errorf("slack input told after %v; want by %v", told, want)
				}
				st.mu.Lock()
				tried := st.tried["slack"].Sub(slackStart)
				st.mu.Unlock()
				if tried > maxBatchRetry {
					t.Errorf("slack input first tried %v after it came; want within maxBatchRetry, %v", tried, maxBatchRetry)
				}
				api := <-apiDone
				// Without a spool, its last batch may begin just before batchTimeout.
				lo, hi := maxBatchRetry/4, maxBatchRetry
				if !spool {
					lo, hi = batchTimeout-maxBatchRetry, batchTimeout+maxBatchRetry
				}
				if api < lo || api > hi {
					t.Errorf("api input told after %v; want between %v and %v", api, lo, hi)
				}
			})
		})
	}
}

// hungStore's EnqueueBatch answers nothing until release is closed, whatever its
// context (a connection that hangs with no reset); then it stores the batch.
type hungStore struct {
	conversation.Store
	release chan struct{}
}

func (s *hungStore) EnqueueBatch(_ context.Context, ins []conversation.Input) ([]bool, error) {
	<-s.release
	out := make([]bool, len(ins))
	for i := range out {
		out[i] = true
	}
	return out, nil
}

// cancelledStore's EnqueueBatch fails when its context ends, with an error of its
// own that is not the context's (PostgreSQL's 57014 query_canceled, as lib/pq
// returns it).
type cancelledStore struct{ conversation.Store }

func (cancelledStore) EnqueueBatch(ctx context.Context, _ []conversation.Input) ([]bool, error) {
	<-ctx.Done()
	return nil, errors.New(`pq: canceling statement due to user request (SQLSTATE 57014)`)
}

// TestGroupCommitStoreTooSlow: an input whose store does not answer by its deadline
// (less spoolReserve with a spool) is told so, storeGrace later at most, in time to
// be spooled, as the store being unavailable (storeDown), whether the store ignores
// its context (it hangs) or fails when it ends with an error of its own; without a
// spool, it is told by its deadline and storeGrace. When the hung store stores it
// after all, its thread is started (kick), as its caller, gone, does not.
func TestGroupCommitStoreTooSlow(t *testing.T) {
	for _, c := range []struct {
		name   string
		hang   bool
		spool  bool
		budget time.Duration
	}{
		{"Hangs", true, true, 2500 * time.Millisecond},
		{"HangsWithoutSpool", true, false, 2500 * time.Millisecond},
		{"HangsWithoutSpoolShortDeadline", true, false, time.Second},
		{"CancelledByTheServer", false, true, 2500 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var st conversation.Store = cancelledStore{}
				hung := &hungStore{release: make(chan struct{})}
				if c.hang {
					st = hung
				}
				var release sync.Once
				defer release.Do(func() { close(hung.release) })
				g := testCommit(st)
				kicked := make(chan conversation.Key, 1)
				g.kick = func(k conversation.Key) { kicked <- k }
				if c.spool {
					g.cfg.Spool = nopSpool{}
				}
				ctx, cancel := context.WithTimeout(context.Background(), c.budget)
				defer cancel()
				start := time.Now()
				in := conversation.Input{ID: "slack", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}}
				r := g.store(ctx, in, nil)
				if !storeDown(r.err) {
					t.Errorf("error %v; want the store counted down", r.err)
				}
				want := c.budget + storeGrace
				if c.spool {
					want -= spoolReserve // time left to spool it
				}
				if told := time.Since(start); told > want {
					t.Errorf("told after %v; want by %v", told, want)
				}
				if !c.hang {
					return
				}
				release.Do(func() { close(hung.release) })
				synctest.Wait()
				wantKicked(t, kicked, in.Key)
			})
		})
	}
}

// slowFirstStore's first batch takes delay (or until its context ends), the others
// none; it records the inputs of each batch.
type slowFirstStore struct {
	conversation.Store
	delay   time.Duration
	mu      sync.Mutex
	batches [][]string
}

func (s *slowFirstStore) EnqueueBatch(ctx context.Context, ins []conversation.Input) ([]bool, error) {
	s.mu.Lock()
	first := len(s.batches) == 0
	var ids []string
	for _, in := range ins {
		ids = append(ids, in.ID)
	}
	s.batches = append(s.batches, ids)
	s.mu.Unlock()
	if first {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	out := make([]bool, len(ins))
	for i := range out {
		out[i] = true
	}
	return out, nil
}

// TestGroupCommitWaitsBehindABatch: an input queued behind a batch waits for it as
// long as that batch may take (its deadline and storeGrace), not only for its own
// time: one near its deadline behind a slow batch rides along in the next and is
// stored, not given up on (it would switch the process to the spool); one behind a
// batch that does not answer at all leaves the queue when that batch is overdue, in
// time to be spooled, and is never stored.
func TestGroupCommitWaitsBehindABatch(t *testing.T) {
	t.Run("Slow", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			st := &slowFirstStore{delay: time.Second}
			g := testCommit(st)
			g.cfg.Spool = nopSpool{}
			go g.store(context.Background(), conversation.Input{ID: "api"}, nil)
			synctest.Wait() // the API input's batch is being stored
			// Its own time (less spoolReserve) is up before the slow batch ends, and
			// not its deadline.
			ctx, cancel := context.WithTimeout(context.Background(), 1200*time.Millisecond)
			defer cancel()
			if r := g.store(ctx, conversation.Input{ID: "near"}, nil); r.err != nil || !r.inserted {
				t.Errorf("inserted %v, error %v; want stored in the batch after the slow one", r.inserted, r.err)
			}
			st.mu.Lock()
			defer st.mu.Unlock()
			if fmt.Sprint(st.batches) != "[[api] [near]]" {
				t.Errorf("batches %v; want [[api] [near]]", st.batches)
			}
		})
	})
	t.Run("Hung", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			hung := &hungStore{release: make(chan struct{})}
			defer close(hung.release)
			g := testCommit(hung)
			g.cfg.Spool = nopSpool{}
			go g.store(context.Background(), conversation.Input{ID: "api"}, nil)
			synctest.Wait()
			start := time.Now()
			// Its own time (2.3 s less spoolReserve, and storeGrace) ends after the
			// hung batch's deadline (maxBatchRetry) and before it is overdue: it is
			// told then, in time to be spooled.
			ctx, cancel := context.WithTimeout(context.Background(), 2300*time.Millisecond)
			defer cancel()
			if r := g.store(ctx, conversation.Input{ID: "slack"}, nil); !errors.Is(r.err, errNoAnswer) || !storeDown(r.err) {
				t.Errorf("error %v; want errNoAnswer", r.err)
			}
			if told, want := time.Since(start), 2300*time.Millisecond-spoolReserve+storeGrace; told > want {
				t.Errorf("told after %v; want by %v, its own time", told, want)
			}
			g.mu.Lock()
			queued := len(g.queue)
			g.mu.Unlock()
			if queued != 0 {
				t.Errorf("%d inputs left in the queue; want the one given up on gone", queued)
			}
		})
	})
}

// splitHangStore refuses any batch of more than one input, and the input "poison",
// with an error of its own (the batch is then split); it hangs on the input "hang"
// until release is closed.
type splitHangStore struct {
	conversation.Store
	hung    chan struct{} // closed when "hang" is being stored alone
	release chan struct{}
}

func (s *splitHangStore) EnqueueBatch(_ context.Context, ins []conversation.Input) ([]bool, error) {
	switch {
	case len(ins) > 1, ins[0].ID == "poison":
		return nil, errors.New("value too long")
	case ins[0].ID == "hang":
		close(s.hung)
		<-s.release
	}
	return []bool{true}, nil
}

// TestGroupCommitGivesUpBehindASplitBatch: a caller queued behind a batch that was
// split (one input refused) gives up, in time to be spooled, when the input stored
// alone after it hangs: the split batch stays overdue for the callers behind it.
func TestGroupCommitGivesUpBehindASplitBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &splitHangStore{hung: make(chan struct{}), release: make(chan struct{})}
		g := testCommit(st)
		g.cfg.Spool = nopSpool{}
		g.running = true                                // the batch is gathered by hand, then run
		for _, id := range []string{"poison", "hang"} { // queued in this order
			go g.store(context.Background(), conversation.Input{ID: id}, nil)
			synctest.Wait()
		}
		go g.run()
		<-st.hung // "poison" refused alone, "hang" hangs
		start := time.Now()
		told := make(chan commitResult, 1)
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
			defer cancel()
			told <- g.store(ctx, conversation.Input{ID: "behind"}, nil)
		}()
		select {
		case r := <-told:
			if !errors.Is(r.err, errNoAnswer) {
				t.Errorf("error %v; want errNoAnswer", r.err)
			}
			if d, want := time.Since(start), maxBatchRetry+storeGrace; d > want {
				t.Errorf("told after %v; want by %v", d, want)
			}
		case <-time.After(10 * time.Second):
			t.Error("the caller behind the split batch was not told while the store hung")
		}
		close(st.release)
		synctest.Wait()
	})
}

// lostThenHungStore fails its first call as a connection lost after the commit
// (ErrUnavailable, the batch stored), and hangs on the next until release is closed,
// then finds the batch stored: not inserted.
type lostThenHungStore struct {
	conversation.Store
	calls   int
	release chan struct{}
}

func (s *lostThenHungStore) EnqueueBatch(_ context.Context, ins []conversation.Input) ([]bool, error) {
	if s.calls++; s.calls == 1 {
		return nil, fmt.Errorf("commit: connection reset: %w", conversation.ErrUnavailable)
	}
	<-s.release
	return make([]bool, len(ins)), nil
}

// TestGroupCommitGoneCallersRetriedInputStartsItsThread: an input whose caller gave
// up on its batch, which then found it stored after an attempt whose reply was lost,
// has its thread started: no caller does it.
func TestGroupCommitGoneCallersRetriedInputStartsItsThread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &lostThenHungStore{release: make(chan struct{})}
		g := testCommit(st)
		g.cfg.Spool = nopSpool{}
		kicked := make(chan conversation.Key, 1)
		g.kick = func(k conversation.Key) { kicked <- k }
		ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
		defer cancel()
		in := conversation.Input{ID: "slack", Key: conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.1"}}
		if r := g.store(ctx, in, nil); !errors.Is(r.err, errNoAnswer) {
			t.Fatalf("error %v; want errNoAnswer", r.err)
		}
		close(st.release)
		synctest.Wait()
		wantKicked(t, kicked, in.Key)
	})
}

// wantKicked checks that the thread of key, whose input was stored after its caller
// gave up on it, was started (groupCommit.kick, which sends on kicked).
func wantKicked(t *testing.T, kicked <-chan conversation.Key, key conversation.Key) {
	t.Helper()
	select {
	case k := <-kicked:
		if k != key {
			t.Errorf("kicked %v; want the input's thread, %v", k, key)
		}
	default:
		t.Error("the input stored after its caller gave up started no work on its thread")
	}
}
