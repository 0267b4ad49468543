package api

import (
	"fmt"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"golang.org/x/sync/semaphore"
	"golang.org/x/time/rate"
)

// Bounds of knowledge uploads: a 10 MB document takes many times its size in
// memory while it is decoded, split and stored, so the uploads in flight are
// capped for the whole server, and each token is rate limited (docs/api.md,
// "Tokens"). Config.UploadsInFlight and UploadsPerMinute set them.
const (
	// DefaultUploadsInFlight is how many uploads the server handles at once by
	// default; another gets 503 with Retry-After.
	DefaultUploadsInFlight = 2
	// DefaultUploadsPerMinute is a token's rate of uploads by default: a burst of
	// that many, then one every minute/that; past it, 429 with Retry-After.
	DefaultUploadsPerMinute = 10
)

// uploadGate bounds uploads: in flight (a semaphore of max) and per token (a token
// bucket each, of perMinute a minute with a burst of as many).
type uploadGate struct {
	inFlight  *semaphore.Weighted
	max       int
	perMinute int
	mu        sync.Mutex
	perToken  map[string]*rate.Limiter
}

// newUploadGate returns the gate of max uploads in flight and perMinute a token;
// a bound below 1 is its default.
func newUploadGate(max, perMinute int) *uploadGate {
	if max < 1 {
		max = DefaultUploadsInFlight
	}
	if perMinute < 1 {
		perMinute = DefaultUploadsPerMinute
	}
	return &uploadGate{inFlight: semaphore.NewWeighted(int64(max)), max: max, perMinute: perMinute, perToken: map[string]*rate.Limiter{}}
}

// enter admits an upload by token, or answers 429 (the token's rate) or 503 (the
// uploads in flight) with Retry-After and returns false. release ends an admitted
// upload.
func (g *uploadGate) enter(api huma.API, ctx huma.Context, token string) (release func(), ok bool) {
	g.mu.Lock()
	lim, found := g.perToken[token]
	if !found {
		lim = rate.NewLimiter(rate.Every(time.Minute/time.Duration(g.perMinute)), g.perMinute)
		g.perToken[token] = lim
	}
	r := lim.Reserve()
	g.mu.Unlock()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		ctx.SetHeader("Retry-After", fmt.Sprint(int(math.Ceil(d.Seconds()))))
		_ = huma.WriteErr(api, ctx, http.StatusTooManyRequests, fmt.Sprintf("this token uploads at most %d documents a minute; try again later", g.perMinute))
		return nil, false
	}
	if !g.inFlight.TryAcquire(1) {
		ctx.SetHeader("Retry-After", "5")
		_ = huma.WriteErr(api, ctx, http.StatusServiceUnavailable, fmt.Sprintf("the server handles at most %d uploads at once; try again shortly", g.max))
		return nil, false
	}
	return func() { g.inFlight.Release(1) }, true
}
