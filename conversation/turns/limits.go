package turns

import (
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"golang.org/x/time/rate"
)

// Floods (docs/operations.md, "Limits and secrets"): Submit refuses a person's input, queuing nothing, when
//
//   - the person's token bucket in this process is empty (Config.UserRate and
//     UserBurst): one bucket for messages and commands, another for clicks,
//     clickFactor times as fast and as deep (a person driving a workflow clicks
//     quickly, and an out-of-date click costs no model call), so that a flood of
//     messages never leaves a person unable to click Stop, Approve or Keep;
//   - or, for a message or a command, its thread has MaxQueuedPerThread pending
//     inputs, or the person has MaxQueuedPerUser pending inputs across threads:
//     counted in the store (Store.CountPending), so that every replica agrees, but
//     only near a bound. Each process keeps in memory the inputs it stored and has
//     not finished, by thread and by person; while both counts are below half their
//     bound, nothing is near one and no query is made: an input costs no store call
//     for the limits. A count from the store replaces the process's own (so inputs
//     another replica finished are forgotten). Half leaves room for the inputs other
//     replicas stored, which a process does not see.
//
// Clicks are not held to the queue bounds: a thread full of messages must still take
// its Stop and workflow buttons, and a click that is out of date costs a look at the
// checkpoint, never a model call. A Stop click is never refused: it acts at once.
//
// While inputs are spooled (the store is unavailable), the queue bounds count the
// inputs this process spooled (the store's count is unknown then), and the buckets
// apply as always: a flood during an outage spools at most the bounds per thread and
// per person, plus what the buckets let through.
//
// The person refused gets one polite ephemeral notice saying when to try again, and
// no other for NoticeInterval: a flood does not become a flood of notices.

// Defaults of the limits' settings.
const (
	// maxTrackedUsers bounds the people whose buckets and notice times a process
	// keeps: the least recently active is forgotten first (its bucket starts full
	// again), so that the map itself cannot be flooded.
	maxTrackedUsers = 10_000
	// countTimeout bounds Submit's count of pending inputs: when the store does not
	// answer in time, the input is admitted (the buckets still apply) and the store
	// retries of Enqueue, or the spool, take over.
	countTimeout = 500 * time.Millisecond
	// clickFactor is how many times faster and deeper a person's clicks' bucket is
	// than their messages'.
	clickFactor = 4
)

// limitKind names the limit that refused an input.
type limitKind string

const (
	limitRate   limitKind = "rate"   // the person's bucket is empty
	limitUser   limitKind = "user"   // the person has MaxQueuedPerUser pending inputs
	limitThread limitKind = "thread" // the thread has MaxQueuedPerThread pending inputs
)

// refusal says why an input was refused and when to try again.
type refusal struct {
	kind limitKind
	// retry is when the person's bucket has a token again (limitRate).
	retry time.Duration
	// pending is the count that reached a bound (limitUser, limitThread).
	pending int
}

// limits holds the per-process state of the limits: people's buckets and notice
// times, and the inputs this process spooled, by thread and by person.
type limits struct {
	rate  rate.Limit // of messages and commands; clicks' is clickFactor times it
	burst int

	mu      sync.Mutex
	users   *simplelru.LRU[string, *userLimits]
	spooled map[conversation.Key]int
	spoolBy map[string]int // by teamID + "/" + userID
	// spooledIDs are the ids of the inputs this process spooled and the drain has
	// not moved yet: a copy of one is a duplicate (enqueuedAlready).
	spooledIDs map[string]struct{}
	// pending and pendingBy count the inputs this process stored and has not
	// finished, by thread and by person (teamID + "/" + userID): estimates that
	// decide when the store is asked (near).
	pending   map[conversation.Key]int
	pendingBy map[string]int
	// admitting and admittingBy count the inputs the queue bounds admitted that are
	// not yet stored, spooled or dropped (reserve; stored, reservation.release): one
	// person's inputs submitted together, in several threads, count one another
	// before any is stored.
	admitting   map[conversation.Key]int
	admittingBy map[string]int
	// watches are the counts of pending inputs the store is taking (watch): each
	// counts the inputs of its thread and person stored meanwhile, which the
	// store's count may not see, and whose reservations have ended.
	watches map[*countWatch]struct{}
}

// maxTrackedPending bounds the threads and the people whose pending inputs a process
// counts in memory; past it the counts start again from zero (the store's counts
// take over near a bound).
const maxTrackedPending = 100_000

// userLimits are one person's buckets and the time of their last notice.
type userLimits struct {
	requests, clicks *rate.Limiter
	noticed          time.Time
}

func newLimits(perMinute float64, burst int) *limits {
	users, _ := simplelru.NewLRU[string, *userLimits](maxTrackedUsers, nil) // only fails for a size <= 0
	return &limits{
		rate: rate.Limit(perMinute / 60), burst: max(burst, 1),
		users: users, spooled: map[conversation.Key]int{}, spoolBy: map[string]int{}, spooledIDs: map[string]struct{}{},
		pending: map[conversation.Key]int{}, pendingBy: map[string]int{},
		admitting: map[conversation.Key]int{}, admittingBy: map[string]int{},
		watches: map[*countWatch]struct{}{},
	}
}

// userLocked returns the limits of user in team, made on first use; mu is held.
func (l *limits) userLocked(team, user string) *userLimits {
	id := personKey(team, user)
	u, ok := l.users.Get(id)
	if !ok {
		u = &userLimits{requests: rate.NewLimiter(l.rate, l.burst), clicks: rate.NewLimiter(l.rate*clickFactor, l.burst*clickFactor)}
		l.users.Add(id, u)
	}
	return u
}

// token is a token taken from a person's bucket (take); the zero token is none.
type token struct {
	r  *rate.Reservation
	at time.Time // when it was taken
}

// giveBack returns t to its bucket, for an input that turned out to be a duplicate.
// The reservation is cancelled as of the time it was made: rate restores nothing as of
// a later time, and counts the tokens taken since then, so that a bucket refilled or
// drawn on meanwhile gets back exactly the one token (never past its burst).
func (t token) giveBack() {
	if t.r != nil {
		t.r.CancelAt(t.at)
	}
}

// take takes a token from the bucket of user in team (clicks' or requests') at now.
// It returns the token and 0 when it did, and otherwise how long until one is there,
// taking nothing.
func (l *limits) take(team, user string, click bool, now time.Time) (token, time.Duration) {
	if l.rate <= 0 || user == "" {
		return token{}, 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.userLocked(team, user)
	b := u.requests
	if click {
		b = u.clicks
	}
	r := b.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return token{}, d
	}
	return token{r: r, at: now}, 0
}

// notice reports whether user in team may be sent a notice at now (none was sent
// within interval), and records it.
func (l *limits) notice(team, user string, now time.Time, interval time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.userLocked(team, user)
	if !u.noticed.IsZero() && now.Sub(u.noticed) < interval {
		return false
	}
	u.noticed = now
	return true
}

// spool counts in as spooled (delta 1) or moved out of the spool (-1); with r, in's
// reservation (nil for none), in the same step as in stops counting as admitted.
// Inputs spooled before this process started were not counted: a count never goes
// below zero.
func (l *limits) spool(in conversation.Input, delta int, r *reservation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.releaseLocked()
	switch {
	case delta < 0:
		delete(l.spooledIDs, in.ID)
	case len(l.spooledIDs) < maxTrackedPending:
		l.spooledIDs[in.ID] = struct{}{}
	}
	if l.spooled[in.Key] += delta; l.spooled[in.Key] <= 0 {
		delete(l.spooled, in.Key)
	}
	if user := in.User(); user != "" {
		id := personKey(in.Key.TeamID, user)
		if l.spoolBy[id] += delta; l.spoolBy[id] <= 0 {
			delete(l.spoolBy, id)
		}
	}
}

// stored counts in, stored by this process, as pending; with r, in's reservation
// (nil for none), in the same step as in stops counting as admitted, so that no
// count of the pending inputs (the store's, once it committed, and this process's)
// sees it twice.
func (l *limits) stored(in conversation.Input, r *reservation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r.releaseLocked()
	l.pendingDeltaLocked(in, 1)
	person := ""
	if user := in.User(); user != "" {
		person = personKey(in.Key.TeamID, user)
	}
	for w := range l.watches {
		if w.key == in.Key {
			w.thread++
		}
		if person != "" && w.person == person {
			w.user++
		}
	}
}

// countWatch is a count of the pending inputs of a thread and a person that the
// store is taking (limits.watch, reserve). An input committed after the watch began
// and before the store read may count twice, and a person at the bound's edge be
// refused one input early: the safe side.
type countWatch struct {
	key    conversation.Key
	person string // personKey; "" for none
	// thread and user are the inputs of key and of person stored since the watch
	// began (guarded by limits.mu).
	thread, user int
	// store is the store's count, once taken (nil: none).
	store *conversation.PendingCounts
}

// watch begins a count of the pending inputs of thread key and of user by the store:
// the caller sets its store once it has it, and hands it to reserve.
func (l *limits) watch(key conversation.Key, user string) *countWatch {
	l.mu.Lock()
	defer l.mu.Unlock()
	w := &countWatch{key: key}
	if user != "" {
		w.person = personKey(key.TeamID, user)
	}
	l.watches[w] = struct{}{}
	return w
}

// finished counts in, finished by this process, as no longer pending.
func (l *limits) finished(in conversation.Input) {
	l.pendingDelta(in, -1)
}

func (l *limits) pendingDelta(in conversation.Input, delta int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pendingDeltaLocked(in, delta)
}

// pendingDeltaLocked is pendingDelta; mu is held.
func (l *limits) pendingDeltaLocked(in conversation.Input, delta int) {
	if len(l.pending) >= maxTrackedPending || len(l.pendingBy) >= maxTrackedPending {
		clear(l.pending)
		clear(l.pendingBy)
	}
	addCount(l.pending, in.Key, delta)
	if user := in.User(); user != "" {
		addCount(l.pendingBy, personKey(in.Key.TeamID, user), delta)
	}
}

// personKey is the key of user in teamID in the maps by person: teamID + "/" + user.
func personKey(teamID, user string) string { return teamID + "/" + user }

// addCount adds delta to m[k], deleting it at zero or below.
func addCount[K comparable](m map[K]int, k K, delta int) {
	if m[k] += delta; m[k] <= 0 {
		delete(m, k)
	}
}

// near reports whether one more input of user in thread key would bring this
// process's count of pending inputs of the thread or of the person (those admitted
// and not yet stored included) to half its bound (0: none) or past it: then the
// store is asked.
func (l *limits) near(key conversation.Key, user string, perThread, perUser int) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if perThread > 0 && 2*(l.pending[key]+l.admitting[key]+1) >= perThread {
		return true
	}
	id := personKey(key.TeamID, user)
	return perUser > 0 && user != "" && 2*(l.pendingBy[id]+l.admittingBy[id]+1) >= perUser
}

// reserve applies MaxQueuedPerThread (perThread) and MaxQueuedPerUser (perUser) to
// an input of user in thread key, given w, the store's count of their pending inputs
// near a bound (nil: none), plus those stored since it began (it may have been taken
// before their commit), which replaces this process's estimate (counted); it adds
// those spooled and those admitted and not yet stored. It returns the refusal, or the
// input's reservation: it counts as admitted until stored or release ends that. The
// check and the count are one step, so that inputs submitted together cannot all pass
// a bound that only some of them fit under, and an input is counted, as admitted or
// as stored, whenever it is stored.
func (l *limits) reserve(key conversation.Key, user string, w *countWatch, perThread, perUser int) (*refusal, *reservation) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var c conversation.PendingCounts
	if w != nil {
		delete(l.watches, w)
		if w.store != nil {
			c = *w.store
			c.Thread += w.thread
			c.User += w.user
			l.countedLocked(key, user, c)
		}
	}
	id := personKey(key.TeamID, user)
	c.Thread += l.spooled[key] + l.admitting[key]
	if user != "" {
		c.User += l.spoolBy[id] + l.admittingBy[id]
	}
	switch {
	case perThread > 0 && c.Thread >= perThread:
		return &refusal{kind: limitThread, pending: c.Thread}, nil
	case perUser > 0 && user != "" && c.User >= perUser:
		return &refusal{kind: limitUser, pending: c.User}, nil
	}
	l.admitting[key]++
	if user != "" {
		l.admittingBy[id]++
	}
	return nil, &reservation{l: l, key: key, user: user}
}

// reservation is an input's count among those the queue bounds admitted and that
// are not yet stored (limits.reserve). A nil reservation is none.
type reservation struct {
	l    *limits
	key  conversation.Key
	user string
	done bool // guarded by l.mu: the count ended
}

// release ends r's count, unless limits.stored did: the input was spooled, found a
// duplicate, or not kept.
func (r *reservation) release() {
	if r == nil {
		return
	}
	r.l.mu.Lock()
	defer r.l.mu.Unlock()
	r.releaseLocked()
}

// releaseLocked is release; r.l.mu is held.
func (r *reservation) releaseLocked() {
	if r == nil || r.done {
		return
	}
	r.done = true
	addCount(r.l.admitting, r.key, -1)
	if r.user != "" {
		addCount(r.l.admittingBy, personKey(r.key.TeamID, r.user), -1)
	}
}

// countedLocked replaces this process's counts of thread key's and user's pending
// inputs with c, the store's; mu is held.
func (l *limits) countedLocked(key conversation.Key, user string, c conversation.PendingCounts) {
	addCount(l.pending, key, c.Thread-l.pending[key])
	if user != "" {
		id := personKey(key.TeamID, user)
		addCount(l.pendingBy, id, c.User-l.pendingBy[id])
	}
}

// isSpooled reports whether input id is one this process spooled and the drain has
// not moved yet.
func (l *limits) isSpooled(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.spooledIDs[id]
	return ok
}

// refusalText is the notice of r in lang.
func refusalText(lang string, r *refusal) string {
	switch r.kind {
	case limitThread:
		return render.Tr(lang, "flood.thread", r.pending)
	case limitUser:
		return render.Tr(lang, "flood.user", r.pending)
	}
	return render.Tr(lang, "flood.rate", render.WaitWords(lang, r.retry))
}
