package webhook_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/threadwright/threadwright/webhook"
)

// TestSign checks Sign against a signature computed with openssl:
//
//	printf 'v0:1700000000:{"id":"evt_1"}' | openssl dgst -sha256 -hmac whsec-test
func TestSign(t *testing.T) {
	const want = "v0=92a7fb7b8eab20e8b41439ef6b0ef293e45bbbe189d5e3d4a573ccee888269e3"
	if got := webhook.Sign("whsec-test", "1700000000", []byte(`{"id":"evt_1"}`)); got != want {
		t.Errorf("Sign = %s; want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	const secret = "whsec-test"
	body := []byte(`{"id":"evt_1","type":"run.started"}`)
	now := time.Unix(1700000000, 0)
	signed := func(ts int64, b []byte) http.Header {
		h := http.Header{}
		h.Set(webhook.HeaderTimestamp, fmt.Sprint(ts))
		h.Set(webhook.HeaderSignature, webhook.Sign(secret, fmt.Sprint(ts), b))
		return h
	}
	for _, tc := range []struct {
		name   string
		header http.Header
		body   []byte
		secret string
		want   error
	}{
		{"OK", signed(now.Unix(), body), body, secret, nil},
		{"ClockSkewWithinMaxAge", signed(now.Unix()+60, body), body, secret, nil},
		{"ChangedBody", signed(now.Unix(), body), []byte(`{"id":"evt_2","type":"run.started"}`), secret, webhook.ErrBadSignature},
		{"OtherSecret", signed(now.Unix(), body), body, "whsec-other", webhook.ErrBadSignature},
		{"Replay", signed(now.Unix()-600, body), body, secret, webhook.ErrStale},
		{"NoTimestamp", http.Header{webhook.HeaderSignature: {webhook.Sign(secret, "", body)}}, body, secret, webhook.ErrBadSignature},
		{"NoSignature", http.Header{webhook.HeaderTimestamp: {fmt.Sprint(now.Unix())}}, body, secret, webhook.ErrBadSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.Verify(tc.secret, tc.header, tc.body, now, 5*time.Minute)
			if !errors.Is(err, tc.want) || (tc.want == nil && err != nil) {
				t.Errorf("Verify = %v; want %v", err, tc.want)
			}
		})
	}
}

// ExampleVerify checks a received request in a receiver's handler.
func ExampleVerify() {
	const secret = "whsec-test" // WEBHOOK_SECRET
	body := []byte(`{"id":"evt_1","type":"run.started"}`)
	header := http.Header{}
	header.Set(webhook.HeaderTimestamp, "1700000000")
	header.Set(webhook.HeaderSignature, webhook.Sign(secret, "1700000000", body))

	// In an http.Handler: body, _ := io.ReadAll(r.Body); header is r.Header.
	err := webhook.Verify(secret, header, body, time.Unix(1700000030, 0), 5*time.Minute)
	fmt.Println("verified:", err == nil)
	body[7] = '2' // a changed body
	fmt.Println(webhook.Verify(secret, header, body, time.Unix(1700000030, 0), 5*time.Minute))
	// Output:
	// verified: true
	// webhook: signature does not match
}
