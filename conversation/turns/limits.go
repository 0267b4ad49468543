package turns

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"golang.org/x/time/rate"
)

// Defaults of the limits' settings.
const (
	// DefaultNoticeInterval is the default of Config.NoticeInterval.
	DefaultNoticeInterval = time.Minute
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
}

// userLimits are one person's buckets and the time of their last notice.
type userLimits struct {
	requests, clicks *rate.Limiter
	noticed          time.Time
}

func newLimits(perMinute float64, burst int) *limits {
	users, _ := simplelru.NewLRU[string, *userLimits](maxTrackedUsers, nil) // only fails for a size <= 0
	return &limits{
		rate: rate.Limit(perMinute / 60), burst: max(burst, 1),
		users: users, spooled: map[conversation.Key]int{}, spoolBy: map[string]int{},
	}
}

// userLocked returns the limits of user in team, made on first use; mu is held.
func (l *limits) userLocked(team, user string) *userLimits {
	id := team + "/" + user
	u, ok := l.users.Get(id)
	if !ok {
		u = &userLimits{requests: rate.NewLimiter(l.rate, l.burst), clicks: rate.NewLimiter(l.rate*clickFactor, l.burst*clickFactor)}
		l.users.Add(id, u)
	}
	return u
}

// take takes a token from the bucket of user in team (clicks' or requests') at now.
// It returns 0 when it did, and otherwise how long until one is there, taking
// nothing.
func (l *limits) take(team, user string, click bool, now time.Time) time.Duration {
	if l.rate <= 0 || user == "" {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	u := l.userLocked(team, user)
	b := u.requests
	if click {
		b = u.clicks
	}
	r := b.ReserveN(now, 1)
	d := r.DelayFrom(now)
	if d > 0 {
		r.CancelAt(now)
	}
	return d
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

// spool counts in as spooled (delta 1) or moved out of the spool (-1). Inputs spooled
// before this process started were not counted: a count never goes below zero.
func (l *limits) spool(in conversation.Input, delta int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.spooled[in.Key] += delta; l.spooled[in.Key] <= 0 {
		delete(l.spooled, in.Key)
	}
	if user := in.User(); user != "" {
		id := in.Key.TeamID + "/" + user
		if l.spoolBy[id] += delta; l.spoolBy[id] <= 0 {
			delete(l.spoolBy, id)
		}
	}
}

// spooledCounts returns the inputs this process spooled for key and for user.
func (l *limits) spooledCounts(key conversation.Key, user string) conversation.PendingCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := conversation.PendingCounts{Thread: l.spooled[key]}
	if user != "" {
		c.User = l.spoolBy[key.TeamID+"/"+user]
	}
	return c
}

// admit applies the limits to in (see the comment at the top of this file) and
// returns the refusal, or nil when in may be queued.
func (s *Runtime) admit(ctx context.Context, in conversation.Input) *refusal {
	user, now := in.User(), s.cfg.Now()
	switch in.Kind {
	case conversation.KindAction:
		if a := in.Action; a != nil && a.Action.Name == conversation.ActionStop {
			return nil // a pipeline's Stop, stored for its next turn: never refused
		}
		if d := s.limits.take(in.Key.TeamID, user, true, now); d > 0 {
			return &refusal{kind: limitRate, retry: d}
		}
		return nil
	case conversation.KindUserMessage, conversation.KindCommand:
	default:
		return nil
	}
	if d := s.limits.take(in.Key.TeamID, user, false, now); d > 0 {
		return &refusal{kind: limitRate, retry: d}
	}
	perThread, perUser := s.cfg.MaxQueuedPerThread, s.cfg.MaxQueuedPerUser
	if perThread <= 0 && (perUser <= 0 || user == "") {
		return nil
	}
	counts := s.limits.spooledCounts(in.Key, user)
	if !s.isSpooling() {
		cctx, cancel := context.WithTimeout(ctx, countTimeout)
		c, err := s.cfg.Store.CountPending(cctx, in.Key, user, max(perThread, perUser))
		cancel()
		switch {
		case err == nil:
			counts.Thread += c.Thread
			counts.User += c.User
		case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, conversation.ErrUnavailable):
			s.log.Warn("pending inputs not counted; the input is admitted", conversation.LogKeyInput, in.ID, "error", err)
		default:
			s.log.Error("pending inputs not counted; the input is admitted", conversation.LogKeyInput, in.ID, "error", err)
		}
	}
	switch {
	case perThread > 0 && counts.Thread >= perThread:
		return &refusal{kind: limitThread, pending: counts.Thread}
	case perUser > 0 && user != "" && counts.User >= perUser:
		return &refusal{kind: limitUser, pending: counts.User}
	}
	return nil
}

// enqueuedAlready reports whether in, refused by a limit, is stored already: a copy
// Slack delivered again because the ack of the first came late is a duplicate, not a
// new request, and is never refused nor noticed. It answers false when the store does
// not answer within countTimeout, or while inputs are spooled.
func (s *Runtime) enqueuedAlready(ctx context.Context, in conversation.Input) bool {
	if s.isSpooling() {
		return false
	}
	cctx, cancel := context.WithTimeout(ctx, countTimeout)
	defer cancel()
	ok, err := s.cfg.Store.Enqueued(cctx, in.ID)
	if err != nil {
		s.log.Warn("refused input not looked up", conversation.LogKeyInput, in.ID, "error", err)
	}
	return ok
}

// refuse logs that in was refused and tells its author, unless they were told within
// NoticeInterval: an ephemeral message in the thread (in the channel for a top-level
// message or a DM), posted in the background so that the ack does not wait.
func (s *Runtime) refuse(in conversation.Input, r *refusal) {
	user := in.User()
	s.log.Info("input refused: over a limit", conversation.LogKeyInput, in.ID, conversation.LogKeyThread, in.Key.String(), "user", user,
		"limit", string(r.kind), "pending", r.pending, "retry_after", r.retry)
	if user == "" || !s.limits.notice(in.Key.TeamID, user, s.cfg.Now(), s.cfg.NoticeInterval) || s.bgCtx.Err() != nil {
		return
	}
	key := in.Key
	if m := in.Message; m != nil && (m.Direct || m.ThreadTS == "" || m.ThreadTS == m.TS) {
		key.ThreadTS = ""
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		ctx, cancel := context.WithTimeout(s.bgCtx, 10*time.Second)
		defer cancel()
		lang := "en"
		if l, err := s.cfg.Messenger.UserLocale(ctx, user); err == nil && l != "" {
			lang = render.UILang(l)
		}
		if err := s.cfg.Messenger.PostEphemeral(ctx, key, user, refusalText(lang, r)); err != nil {
			s.log.Warn("notice of a refused input not posted", conversation.LogKeyInput, in.ID, "error", err)
		}
	}()
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
