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
// "Tokens").
const (
	// maxUploadsInFlight is how many uploads the server handles at once; another
	// gets 503 with Retry-After.
	maxUploadsInFlight = 2
	// uploadEvery and uploadBurst are a token's rate of uploads: a burst of 10, then
	// one every 6 s (10 a minute); past it, 429 with Retry-After.
	uploadEvery = 6 * time.Second
	uploadBurst = 10
)

// uploadGate bounds uploads: in flight (a semaphore) and per token (a token bucket
// each).
type uploadGate struct {
	inFlight *semaphore.Weighted
	mu       sync.Mutex
	perToken map[string]*rate.Limiter
}

func newUploadGate() *uploadGate {
	return &uploadGate{inFlight: semaphore.NewWeighted(maxUploadsInFlight), perToken: map[string]*rate.Limiter{}}
}

// enter admits an upload by token, or answers 429 (the token's rate) or 503 (the
// uploads in flight) with Retry-After and returns false. release ends an admitted
// upload.
func (g *uploadGate) enter(api huma.API, ctx huma.Context, token string) (release func(), ok bool) {
	g.mu.Lock()
	lim, found := g.perToken[token]
	if !found {
		lim = rate.NewLimiter(rate.Every(uploadEvery), uploadBurst)
		g.perToken[token] = lim
	}
	r := lim.Reserve()
	g.mu.Unlock()
	if d := r.Delay(); d > 0 {
		r.Cancel()
		ctx.SetHeader("Retry-After", fmt.Sprint(int(math.Ceil(d.Seconds()))))
		_ = huma.WriteErr(api, ctx, http.StatusTooManyRequests, fmt.Sprintf("this token uploads at most %d documents a minute; try again later", int(time.Minute/uploadEvery)))
		return nil, false
	}
	if !g.inFlight.TryAcquire(1) {
		ctx.SetHeader("Retry-After", "5")
		_ = huma.WriteErr(api, ctx, http.StatusServiceUnavailable, fmt.Sprintf("%d uploads are in progress already; try again shortly", maxUploadsInFlight))
		return nil, false
	}
	return func() { g.inFlight.Release(1) }, true
}
