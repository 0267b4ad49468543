package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The headers of a webhook request.
const (
	// HeaderTimestamp is the request's time, in Unix seconds, as signed.
	HeaderTimestamp = "X-Threadwright-Request-Timestamp"
	// HeaderSignature is "v0=" and the hex HMAC-SHA256 of the request (Sign).
	HeaderSignature = "X-Threadwright-Signature"
	// HeaderEventID and HeaderEventType repeat the body's id and type, for routing
	// and logs before the body is parsed.
	HeaderEventID   = "X-Threadwright-Event-Id"
	HeaderEventType = "X-Threadwright-Event-Type"
)

// Sign returns the signature of body sent at timestamp (Unix seconds, as in
// HeaderTimestamp) with secret: "v0=" + hex(HMAC-SHA256(secret, "v0:" + timestamp +
// ":" + body)), the scheme of Slack's signing secret.
func Sign(secret, timestamp string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("v0:" + timestamp + ":"))
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// Errors of Verify.
var (
	ErrBadSignature = errors.New("webhook: signature does not match")
	ErrStale        = errors.New("webhook: request timestamp too old or in the future")
)

// Verify checks a received webhook request, for receivers written in Go: header's
// HeaderTimestamp must be within maxAge of now (replays of an old request are
// refused), and HeaderSignature must be Sign's for body and secret (compared in
// constant time). Errors: ErrStale, ErrBadSignature.
func Verify(secret string, header http.Header, body []byte, now time.Time, maxAge time.Duration) error {
	ts := header.Get(HeaderTimestamp)
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return fmt.Errorf("%w: %s %q", ErrBadSignature, HeaderTimestamp, ts)
	}
	if d := now.Sub(time.Unix(sec, 0)); d > maxAge || d < -maxAge {
		return ErrStale
	}
	if !hmac.Equal([]byte(header.Get(HeaderSignature)), []byte(Sign(secret, ts, body))) {
		return ErrBadSignature
	}
	return nil
}
