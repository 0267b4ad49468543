package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// ErrTooLarge is wrapped by Downloader.Download's error for a body longer than its
// byte bound. Test with errors.Is.
var ErrTooLarge = errors.New("web: download too large")

// Downloader reads the files people attach in Slack from their url_private with the
// bot token (docs/architecture.md, "Files"), under the address guard and time bound
// of fetch_url (FetchConfig's AllowPrivate, AllowHosts and Timeout) and a byte bound
// of its own. It reads only from hosts it was given (Slack's file host, and the
// emulator's in development and tests), so the token goes nowhere else.
type Downloader struct {
	client   *http.Client
	hosts    []string // lower case, with the port when one was given
	token    string
	maxBytes int64
}

// NewDownloader returns a Downloader for URLs on hosts ("files.slack.com",
// "127.0.0.1:3000"), sending token as a bearer token, reading at most maxBytes. The
// hosts are let through the address guard, since configuration, not a message,
// chose them. Redirects are followed only to the same hosts (at most
// DefaultFetchMaxRedirects).
func NewDownloader(cfg FetchConfig, hosts []string, token string, maxBytes int64) (*Downloader, error) {
	cfg.AllowHosts = append(slices.Clone(cfg.AllowHosts), hosts...)
	guard, err := newFetchGuard(cfg.AllowPrivate, cfg.AllowHosts)
	if err != nil {
		return nil, err
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = DefaultFetchTimeout
	}
	d := &Downloader{token: token, maxBytes: maxBytes}
	for _, h := range hosts {
		d.hosts = append(d.hosts, strings.ToLower(h))
	}
	d.client = &http.Client{
		Timeout:   timeout,
		Transport: guard.transport(timeout),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > DefaultFetchMaxRedirects {
				return errTooManyRedirects
			}
			if !d.Allowed(req.URL.String()) {
				return fmt.Errorf("a redirect to %s, which is not Slack's file host", req.URL.Redacted())
			}
			req.Header.Set("Authorization", "Bearer "+d.token)
			return nil
		},
	}
	return d, nil
}

// Allowed reports whether rawURL is an https URL (or http, for a host given with its
// port, as the emulator's is) on one of the Downloader's hosts.
func (d *Downloader) Allowed(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") {
		return false
	}
	if host := strings.ToLower(u.Host); slices.Contains(d.hosts, host) {
		return u.Scheme == "https" || u.Port() != "" // the emulator's http, on its port
	}
	return u.Scheme == "https" && slices.Contains(d.hosts, strings.ToLower(u.Hostname()))
}

// Download reads the body at rawURL, at most the Downloader's byte bound: a longer
// body is an error wrapping ErrTooLarge. A URL on another host is refused before any
// request.
func (d *Downloader) Download(ctx context.Context, rawURL string) ([]byte, error) {
	if !d.Allowed(rawURL) {
		return nil, fmt.Errorf("download: %q is not on Slack's file host", rawURL)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+d.token)
	req.Header.Set("User-Agent", userAgent)
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, fmt.Errorf("download %s: HTTP %s", resp.Request.URL.Redacted(), resp.Status)
	}
	if resp.ContentLength > d.maxBytes {
		return nil, fmt.Errorf("download: %d bytes: %w", resp.ContentLength, ErrTooLarge)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, d.maxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("download: %w", err)
	}
	if int64(len(body)) > d.maxBytes {
		return nil, fmt.Errorf("download: more than %d bytes: %w", d.maxBytes, ErrTooLarge)
	}
	return body, nil
}
