package webhook

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"golang.org/x/sync/errgroup"

	"github.com/threadwright/threadwright/conversation"
)

// Outbox is the store's webhook outbox (migrations 00009 and 00012): store/sqlite and
// store/postgres implement it. Each receiver (ReceiverID) has its own delivery of
// every event: its own claim, attempts, backoff and outcome.
type Outbox interface {
	// ClaimEvents leases to owner, for ttl, up to limit events due for receiver, each
	// the oldest event of its thread whose delivery to receiver has not ended, oldest
	// first.
	ClaimEvents(ctx context.Context, receiver, owner string, ttl time.Duration, limit int) ([]conversation.Event, error)
	// EventDone ends receiver's delivery of the event seq: delivered when lastErr is
	// "", abandoned otherwise. It does nothing unless owner's claim is the delivery's
	// last (another replica claimed it after owner's lease expired).
	EventDone(ctx context.Context, receiver string, seq int64, owner, lastErr string) error
	// EventFailed records a failed attempt (lastErr) and makes the event due again
	// for receiver after retryIn; like EventDone, only when owner's claim is the
	// delivery's last.
	EventFailed(ctx context.Context, receiver string, seq int64, owner string, retryIn time.Duration, lastErr string) error
	// CloseEvents ends the events whose delivery ended for every one of receivers.
	CloseEvents(ctx context.Context, receivers []string) (int, error)
	// DeleteEvents deletes the events that ended before before.
	DeleteEvents(ctx context.Context, before time.Time) (int, error)
}

// Receiver is one webhook target: its URL and the secret its requests are signed
// with (WEBHOOK_URLS' "url|secret" entries; docs/api.md, "Webhooks").
type Receiver struct {
	URL, Secret string
}

// ReceiverID returns the outbox's name of the receiver at u: a hash of the URL
// (whose path may hold a secret), stable across restarts and the order of the list.
func ReceiverID(u string) string {
	sum := sha256.Sum256([]byte(u))
	return "sha256:" + hex.EncodeToString(sum[:12])
}

// Defaults of Config.
const (
	DefaultTimeout      = 10 * time.Second
	DefaultPoll         = time.Second
	DefaultFirstBackoff = 5 * time.Second
	DefaultMaxBackoff   = time.Hour
	DefaultMaxAge       = 24 * time.Hour
	// DefaultBatch is how many events a claim takes, and how many are sent at once.
	DefaultBatch = 16
	// KeepEnded is how long an event whose delivery ended (delivered or abandoned)
	// stays in the outbox, for inspection; Run deletes older ones hourly.
	KeepEnded = 7 * 24 * time.Hour
)

// Config configures a Deliverer.
type Config struct {
	// Receivers receive every event, each signed with its own secret. URLs are
	// receivers too; they, and a Receiver without a Secret, are signed with Secret
	// (WEBHOOK_SECRET). Each URL may be listed once.
	Receivers []Receiver
	URLs      []string
	Secret    string
	Outbox    Outbox
	// Client sends the requests; web.GuardedClient (package agents/web) applies fetch_url's address
	// rules (WEBHOOK_ALLOW_HOSTS). Its own Timeout is not relied on: Timeout bounds
	// each request.
	Client *http.Client
	// Owner names this replica in claims (a lease owner).
	Owner string
	// Permalinks, when set, adds the thread's link to events (chat.getPermalink).
	Permalinks conversation.Permalinker
	Logger     *slog.Logger
	// Timeout bounds one request (DefaultTimeout). Poll is how often the outbox is
	// read when it had nothing due (DefaultPoll).
	Timeout, Poll time.Duration
	// FirstBackoff and MaxBackoff bound the exponential delay between attempts
	// (DefaultFirstBackoff, DefaultMaxBackoff); an event still failing MaxAge after it
	// happened is abandoned (DefaultMaxAge).
	FirstBackoff, MaxBackoff, MaxAge time.Duration
	// Now returns the current time (default time.Now).
	Now func() time.Time
}

// Deliverer sends the outbox's events; Run does the work.
type Deliverer struct {
	cfg Config
	log *slog.Logger
	// rcvs are the receivers (Config.Receivers, then Config.URLs), secrets set;
	// ids are their ReceiverIDs, in that order.
	rcvs []Receiver
	ids  []string

	// mu guards links, the permalinks found so far by thread.
	mu    sync.Mutex
	links map[conversation.Key]string
}

// New returns a Deliverer of cfg. Errors: no URL, a URL listed twice, a receiver
// without a secret, no outbox or client.
func New(cfg Config) (*Deliverer, error) {
	if cfg.Outbox == nil || cfg.Client == nil {
		return nil, errors.New("webhook: no outbox or client")
	}
	rcvs := slices.Clone(cfg.Receivers)
	for _, u := range cfg.URLs {
		rcvs = append(rcvs, Receiver{URL: u})
	}
	if len(rcvs) == 0 {
		return nil, errors.New("webhook: no URL")
	}
	ids := make([]string, len(rcvs))
	for i, r := range rcvs {
		p, err := url.Parse(r.URL)
		if err != nil || (p.Scheme != "http" && p.Scheme != "https") || p.Host == "" {
			return nil, fmt.Errorf("webhook: %q is not an absolute http(s) URL", redactURL(r.URL))
		}
		if rcvs[i].Secret == "" {
			rcvs[i].Secret = cfg.Secret
		}
		if rcvs[i].Secret == "" {
			return nil, fmt.Errorf("webhook: no secret for URL %d", i+1)
		}
		if ids[i] = ReceiverID(r.URL); slices.Contains(ids[:i], ids[i]) {
			return nil, fmt.Errorf("webhook: URL %d (%s) is listed twice", i+1, redactURL(r.URL))
		}
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Timeout, DefaultTimeout)
	def(&cfg.Poll, DefaultPoll)
	def(&cfg.FirstBackoff, DefaultFirstBackoff)
	def(&cfg.MaxBackoff, DefaultMaxBackoff)
	def(&cfg.MaxAge, DefaultMaxAge)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Deliverer{cfg: cfg, log: log.With("component", "webhook"), rcvs: rcvs, ids: ids,
		links: map[conversation.Key]string{}}, nil
}

// lease is how long a claim holds its events for one receiver: the permalink's
// lookup and the request, each with its timeout, and time to record the outcome.
func (d *Deliverer) lease() time.Duration {
	return 2*d.cfg.Timeout + 30*time.Second
}

// Run delivers events until ctx ends: for each receiver at once, it claims a batch,
// sends its events at once (each the head of its thread for that receiver), records
// each outcome (Once), and claims again at once when there was work, or after Poll.
// At start and hourly, it ends the events every receiver is done with and deletes
// those that ended more than KeepEnded ago. Store errors are
// logged and retried after Poll. It returns nil when ctx ends.
func (d *Deliverer) Run(ctx context.Context) error {
	timer := time.NewTimer(0)
	defer timer.Stop()
	var purged time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		if now := d.cfg.Now(); now.Sub(purged) >= time.Hour {
			purged = now
			// Events held open only by a receiver since removed from the list end now.
			if _, err := d.cfg.Outbox.CloseEvents(ctx, d.ids); err != nil {
				d.log.Warn("webhook events not ended", "error", err)
			}
			if n, err := d.cfg.Outbox.DeleteEvents(ctx, now.Add(-KeepEnded)); err != nil {
				d.log.Warn("old webhook events not deleted", "error", err)
			} else if n > 0 {
				d.log.Info("old webhook events deleted", "count", n)
			}
		}
		n, err := d.Once(ctx)
		if err != nil && ctx.Err() == nil {
			d.log.Warn("webhook outbox not read", "error", err)
		}
		wait := d.cfg.Poll
		if n > 0 {
			wait = 0
		}
		timer.Reset(wait)
	}
}

// Once claims one batch of due events for each receiver, sends them, records the
// outcomes and ends the events every receiver is done with (CloseEvents); it returns
// how many deliveries it claimed. A receiver that fails holds back only its own
// deliveries.
func (d *Deliverer) Once(ctx context.Context) (int, error) {
	var (
		g       errgroup.Group
		claimed atomic.Int64
	)
	for i := range d.rcvs {
		g.Go(func() error {
			n, err := d.onceFor(ctx, i)
			claimed.Add(int64(n))
			return err
		})
	}
	err := g.Wait()
	if claimed.Load() > 0 {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, cerr := d.cfg.Outbox.CloseEvents(cctx, d.ids); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}
	return int(claimed.Load()), err
}

// onceFor claims one batch of events due for receiver i, sends them and records the
// outcomes; it returns how many it claimed.
func (d *Deliverer) onceFor(ctx context.Context, i int) (int, error) {
	// The claim is not cut short by ctx: a claim the database committed while the
	// driver gave up on ctx would stay held by this owner, and a restart would wait
	// out the lease. A claim made as ctx ends is handed back at once (deliver).
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	events, err := d.cfg.Outbox.ClaimEvents(cctx, d.ids[i], d.cfg.Owner, d.lease(), DefaultBatch)
	cancel()
	if err != nil {
		return 0, err
	}
	var g errgroup.Group
	for _, e := range events {
		g.Go(func() error { return d.deliver(ctx, i, e) })
	}
	return len(events), g.Wait()
}

// deliver sends e to receiver i and records the outcome, on a context that outlives
// ctx's cancellation by a little (a shutdown keeps what was sent).
func (d *Deliverer) deliver(ctx context.Context, i int, e conversation.Event) error {
	log := d.log.With("event_id", e.Data.ID, "type", e.Data.Type, "thread_ts", e.Key.ThreadTS,
		"url", i+1, "attempt", e.Attempts+1)
	sendErr := d.send(ctx, d.rcvs[i], e)
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	id, o := d.ids[i], d.cfg.Outbox
	switch {
	case sendErr == nil:
		log.Debug("webhook delivered")
		return o.EventDone(fctx, id, e.Seq, d.cfg.Owner, "")
	case ctx.Err() != nil:
		// Shutting down: free the claim, so that a replica (or this one, restarted)
		// sends the event again at once rather than after the lease.
		return o.EventFailed(fctx, id, e.Seq, d.cfg.Owner, 0, "interrupted: shutting down")
	case d.cfg.Now().Sub(e.Data.Time) >= d.cfg.MaxAge:
		log.Error("webhook abandoned", "error", sendErr)
		return o.EventDone(fctx, id, e.Seq, d.cfg.Owner, "abandoned: "+sendErr.Error())
	}
	retry := d.backoff(e.Attempts + 1)
	log.Warn("webhook not delivered; will retry", "error", sendErr, "retry_in", retry)
	return o.EventFailed(fctx, id, e.Seq, d.cfg.Owner, retry, sendErr.Error())
}

// backoff returns the delay after the nth failed attempt: exponential from
// FirstBackoff, doubling, with jitter, capped at MaxBackoff.
func (d *Deliverer) backoff(n int) time.Duration {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval, b.MaxInterval, b.MaxElapsedTime = d.cfg.FirstBackoff, d.cfg.MaxBackoff, 0
	b.Reset()
	var wait time.Duration
	for range max(n, 1) {
		if wait = b.NextBackOff(); wait >= d.cfg.MaxBackoff {
			break
		}
	}
	return min(wait, d.cfg.MaxBackoff)
}

// send POSTs e to r, signed with r's secret.
func (d *Deliverer) send(ctx context.Context, r Receiver, e conversation.Event) error {
	data := e.Data
	data.Run.Permalink = d.permalink(ctx, e.Key)
	body, err := json.Marshal(data)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	return d.post(ctx, r, data, body)
}

// post sends one signed request; a response other than 2xx is an error. Errors never
// carry the URL, whose path may hold a secret.
func (d *Deliverer) post(ctx context.Context, r Receiver, data conversation.EventData, body []byte) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.URL, bytes.NewReader(body))
	if err != nil {
		return errors.New("bad URL")
	}
	ts := strconv.FormatInt(d.cfg.Now().Unix(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "threadwright-webhook/1")
	req.Header.Set(HeaderTimestamp, ts)
	req.Header.Set(HeaderSignature, Sign(r.Secret, ts, body))
	req.Header.Set(HeaderEventID, data.ID)
	req.Header.Set(HeaderEventType, data.Type)
	resp, err := d.cfg.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("HTTP %s", resp.Status)
	}
	return nil
}

// permalink returns the Slack link of key's thread, "" when there is no Permalinker
// or it failed (asked again next time).
func (d *Deliverer) permalink(ctx context.Context, key conversation.Key) string {
	if d.cfg.Permalinks == nil {
		return ""
	}
	d.mu.Lock()
	link, ok := d.links[key]
	d.mu.Unlock()
	if ok {
		return link
	}
	ctx, cancel := context.WithTimeout(ctx, d.cfg.Timeout)
	defer cancel()
	link, err := d.cfg.Permalinks.Permalink(ctx, key, key.ThreadTS)
	if err != nil {
		d.log.Debug("no permalink for a webhook event", "thread_ts", key.ThreadTS, "error", err)
		return ""
	}
	d.mu.Lock()
	if len(d.links) > 10_000 {
		clear(d.links)
	}
	d.links[key] = link
	d.mu.Unlock()
	return link
}

// redactURL returns u without its path and query, which may hold a secret.
func redactURL(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Scheme + "://" + p.Host + "/…"
}
