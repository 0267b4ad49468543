package agents

import (
	"net/http"
	"time"
)

// GuardedClient returns an HTTP client for requests to URLs that configuration, not
// the bot's operator code, chose (webhook targets, docs/api.md, "Webhooks"): it reaches only
// the addresses fetch_url may reach under cfg (cfg.AllowPrivate, cfg.AllowHosts; see
// FetchURLTool), checked when each connection is dialled, uses no proxy and follows
// no redirect (a 3xx is the response). timeout bounds a whole request. A refused address is an error that
// wraps ErrAddressRefused; an unusable cfg.AllowHosts entry is an error (as Validate).
func GuardedClient(cfg FetchConfig, timeout time.Duration) (*http.Client, error) {
	guard, err := newFetchGuard(cfg)
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would dial the target itself, past the guard
			DialContext:           guard.dialContext,
			ForceAttemptHTTP2:     true,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: timeout,
			MaxIdleConns:          16,
			IdleConnTimeout:       90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}
