package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/htmltext"
	"github.com/threadwright/threadwright/internal/textcut"
)

// Category is the category of the web tools, fetch_url and web_search.
const Category = "Web"

// Defaults of FetchConfig.
const (
	DefaultFetchMaxBytes     = 1 << 20 // 1 MiB
	DefaultFetchTimeout      = 15 * time.Second
	DefaultFetchMaxRedirects = 5
	DefaultFetchMaxChars     = 20_000
)

// userAgent is the User-Agent header of the web tools' requests.
const userAgent = "threadwright/1 (+https://github.com/threadwright/threadwright)"

// FetchConfig configures the fetch_url tool (FetchURLTool). The zero value is usable:
// public addresses only, with the defaults below.
type FetchConfig struct {
	// MaxBytes bounds the bytes of a response body read (after decompression);
	// default DefaultFetchMaxBytes, 1 MiB. A longer body is cut and the result says so.
	MaxBytes int64
	// Timeout bounds a whole fetch: connecting, redirects and reading the body;
	// default DefaultFetchTimeout, 15 s.
	Timeout time.Duration
	// MaxRedirects is the number of redirects followed; default
	// DefaultFetchMaxRedirects, 5. Negative follows none.
	MaxRedirects int
	// MaxChars bounds the text returned to the model, in characters (runes); default
	// DefaultFetchMaxChars, 20,000. Longer text is cut and the result says so.
	MaxChars int
	// AllowPrivate lets fetch_url reach any address, loopback, private and link-local
	// ones included (so cloud metadata services too): for tests and for deployments
	// that want their intranet read.
	AllowPrivate bool
	// AllowHosts are exceptions to the address rule. An entry is a host name or IP
	// literal, matched against the URL's host ("wiki.corp.example", "10.1.2.3",
	// "[fd00::1]"); the same with a port, which then must match too
	// ("wiki.corp.example:8080"); "*.corp.example", matching the subdomains of
	// corp.example; or a CIDR prefix ("10.20.0.0/16"), matched against the address a
	// host resolves to. Matching ignores case. Check entries with Validate.
	AllowHosts []string
}

// Validate reports AllowHosts entries that cannot be used (empty, an unparseable
// CIDR prefix or port), so start-up can refuse a mistyped setting. FetchURLTool
// ignores such entries.
func (c FetchConfig) Validate() error {
	_, err := newFetchGuard(c.AllowPrivate, c.AllowHosts)
	return err
}

// GuardedClient returns an HTTP client for requests to URLs that configuration, not
// the bot's operator code, chose (webhook targets, docs/api.md, "Webhooks"): it reaches only
// the addresses fetch_url may reach under cfg (cfg.AllowPrivate, cfg.AllowHosts; see
// FetchURLTool), checked when each connection is dialled, uses no proxy and follows
// no redirect (a 3xx is the response). timeout bounds a whole request. A refused
// address is an error that wraps ErrAddressRefused; an unusable cfg.AllowHosts entry
// is an error (as Validate).
func GuardedClient(cfg FetchConfig, timeout time.Duration) (*http.Client, error) {
	guard, err := newFetchGuard(cfg.AllowPrivate, cfg.AllowHosts)
	if err != nil {
		return nil, err
	}
	return &http.Client{
		Timeout:       timeout,
		Transport:     guard.transport(timeout),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

// FetchURLTool returns the fetch_url tool: an HTTP GET of an http or https URL the
// model chose, {"url": "https://example.com/page"}, returned as readable text. HTML
// (text/html, application/xhtml+xml) becomes Markdown text with the page's title,
// headings as "# …", list items as "- …", code in backticks and fences, and links as
// "text (url)"; script, style, nav, and the page's own header and footer are dropped
// (htmltext.Convert). Plain text, Markdown and JSON are returned as they are; other
// content types are refused before their body is read. cfg bounds the bytes read, the
// time, the redirects and the characters returned.
//
// Because the model chooses the URL, fetch_url refuses loopback, private (RFC 1918,
// fc00::/7), link-local (169.254.0.0/16 with the cloud metadata services, fe80::/10),
// unspecified, multicast, shared CGNAT (100.64.0.0/10) and other special-purpose
// addresses, in IPv4-mapped and NAT64/6to4 IPv6 forms too, unless cfg.AllowPrivate or
// cfg.AllowHosts allows them. The rule is enforced when a connection is dialled, on
// the address the host name resolved to (a net.Dialer ControlContext hook), so a name
// that resolves to a private address, DNS rebinding and a redirect to a private host
// are refused like a literal address in the URL, which is also refused before any
// request. No HTTP proxy is used (a proxy would dial for us). A refusal is an error
// wrapping ErrAddressRefused: "fetch_url refuses 127.0.0.1: loopback addresses are
// not allowed".
func FetchURLTool(cfg FetchConfig) (agents.ToolSpec, agents.Tool) {
	f := newFetcher(cfg)
	spec := agents.ToolSpec{
		Name: "fetch_url",
		Description: "Fetch a public web page or file by its http(s) URL and return its readable text: " +
			"HTML as text with its title, headings and links, plain text and JSON as they are. " +
			"Use it to read a page the user mentions or a search result.",
		Category: Category,
		Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string",` +
			`"description":"the absolute http or https URL to fetch"}},"required":["url"]}`),
		// Longer than the fetch's own timeout, so that its clearer message wins.
		Timeout: f.timeout + 5*time.Second,
		// A GET that changes nothing, of a page anyone may have written.
		ReadOnly: true, Untrusted: true,
	}
	return spec, agents.ToolFunc(f.run)
}

// fetcher runs fetch_url with one HTTP client, reused across runs.
type fetcher struct {
	guard        *fetchGuard
	client       *http.Client
	maxBytes     int64
	timeout      time.Duration
	maxRedirects int
	maxChars     int
}

func newFetcher(cfg FetchConfig) *fetcher {
	guard, _ := newFetchGuard(cfg.AllowPrivate, cfg.AllowHosts) // unusable entries are dropped; Validate reports them
	f := &fetcher{
		guard:        guard,
		maxBytes:     cfg.MaxBytes,
		timeout:      cfg.Timeout,
		maxRedirects: cfg.MaxRedirects,
		maxChars:     cfg.MaxChars,
	}
	if f.maxBytes <= 0 {
		f.maxBytes = DefaultFetchMaxBytes
	}
	if f.timeout <= 0 {
		f.timeout = DefaultFetchTimeout
	}
	switch {
	case f.maxRedirects == 0:
		f.maxRedirects = DefaultFetchMaxRedirects
	case f.maxRedirects < 0:
		f.maxRedirects = 0
	}
	if f.maxChars <= 0 {
		f.maxChars = DefaultFetchMaxChars
	}
	f.client = &http.Client{
		Transport: guard.transport(f.timeout),
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > f.maxRedirects {
				return errTooManyRedirects
			}
			return guard.checkURL(req.URL)
		},
	}
	return f
}

var (
	errTooManyRedirects = errors.New("too many redirects")
	errFetchTimeout     = errors.New("fetch timeout")
)

func (f *fetcher) run(ctx context.Context, raw json.RawMessage) (string, error) {
	var args struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", fmt.Errorf("invalid arguments: %w", err)
	}
	p, err := f.fetch(ctx, args.URL)
	if err != nil {
		return "", err
	}
	agents.ReportEntities(ctx, conversation.Entity{ID: p.final.Redacted(), Title: strings.Join(strings.Fields(p.title), " "), Type: "web page"}) // agents/contract.go
	var b strings.Builder
	fmt.Fprintf(&b, "URL: %s\n", p.final.Redacted())
	if p.final.String() != p.url.String() {
		fmt.Fprintf(&b, "Redirected from: %s\n", p.url.Redacted())
	}
	if p.title != "" {
		fmt.Fprintf(&b, "Title: %s\n", p.title)
	}
	if p.kind != "html" {
		fmt.Fprintf(&b, "Content-Type: %s\n", p.mediaType)
	}
	b.WriteByte('\n')
	if p.text == "" {
		b.WriteString("(no readable text)")
	} else {
		shown, total := cutText(p.text, f.maxChars), utf8.RuneCountInString(p.text)
		b.WriteString(shown)
		switch {
		case p.convertCut:
			fmt.Fprintf(&b, "\n\n[cut: the text has more than %d characters; only the first %d are shown]", total, utf8.RuneCountInString(shown))
		case shown != p.text:
			fmt.Fprintf(&b, "\n\n[cut: the text has %d characters; only the first %d are shown]", total, utf8.RuneCountInString(shown))
		}
	}
	if p.bytesCut {
		fmt.Fprintf(&b, "\n\n[cut: the response is longer than %d bytes; only the first %d were read]", f.maxBytes, f.maxBytes)
	}
	return b.String(), nil
}

// page is a fetched page (fetcher.fetch): the URL asked for and the one read after
// redirects, its title ("" when none), its readable text, trimmed (HTML converted,
// at most about maxChars characters of it), its media type and how it was rendered
// (contentKind), and whether the text (convertCut) or the body (bytesCut) was cut.
type page struct {
	url, final           *url.URL
	title, text          string
	mediaType, kind      string
	convertCut, bytesCut bool
}

// fetch reads rawURL within the fetcher's guard and limits: the one fetch of the
// fetch_url tool and of SourceFetcher. Errors are the model's to read: a refused
// address (wrapping ErrAddressRefused), an HTTP status, a content type it does not
// read, a timeout.
func (f *fetcher) fetch(ctx context.Context, rawURL string) (page, error) {
	rawURL = strings.TrimSpace(rawURL)
	u, err := url.Parse(rawURL)
	if err != nil || !u.IsAbs() {
		return page{}, fmt.Errorf("fetch_url needs an absolute http or https URL, not %q", rawURL)
	}
	u.Fragment, u.RawFragment = "", ""
	if err := f.guard.checkURL(u); err != nil {
		return page{}, err
	}

	ctx, cancel := context.WithTimeoutCause(ctx, f.timeout, errFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return page{}, fmt.Errorf("fetch_url cannot request %s: %w", u.Redacted(), err)
	}
	req.Header.Set("User-Agent", userAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.9,*/*;q=0.1")
	resp, err := f.client.Do(req)
	if err != nil {
		return page{}, f.explain(ctx, u, err)
	}
	defer resp.Body.Close()
	final := resp.Request.URL

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return page{}, fmt.Errorf("fetch %s: HTTP %s", final.Redacted(), resp.Status)
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	kind := contentKind(mediaType)
	if mediaType != "" && kind == "" {
		return page{}, fmt.Errorf("fetch %s: the response is %s; fetch_url reads only HTML, plain text and JSON", final.Redacted(), mediaType)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.maxBytes+1))
	if err != nil {
		return page{}, f.explain(ctx, final, err)
	}
	bytesCut := int64(len(body)) > f.maxBytes
	if bytesCut {
		body = body[:f.maxBytes]
	}
	if mediaType == "" {
		mediaType, _, _ = mime.ParseMediaType(http.DetectContentType(body))
		if kind = contentKind(mediaType); kind == "" {
			return page{}, fmt.Errorf("fetch %s: the response looks like %s; fetch_url reads only HTML, plain text and JSON", final.Redacted(), mediaType)
		}
	}

	text := htmltext.Decode(body, resp.Header.Get("Content-Type"), kind == "html", bytesCut)
	p := page{url: u, final: final, text: text, mediaType: mediaType, kind: kind, bytesCut: bytesCut}
	if kind == "html" {
		// Converted only as far as can be shown: f.maxChars characters of up to
		// utf8.UTFMax bytes, and one more, so that a cut shows.
		doc := htmltext.Convert(p.text, htmltext.Options{Base: final, MaxBytes: utf8.UTFMax * (f.maxChars + 1)})
		p.title, p.text, p.convertCut = doc.Title, doc.Text, doc.Cut
	}
	p.text = strings.TrimSpace(p.text)
	return p, nil
}

// explain turns a failed request to u into the error the model reads.
func (f *fetcher) explain(ctx context.Context, u *url.URL, err error) error {
	var refused *addressError
	if errors.As(err, &refused) {
		var uerr *url.Error
		if errors.As(err, &uerr) && uerr.URL != u.String() {
			return fmt.Errorf("%w (redirected from %s to %s)", refused, u.Redacted(), uerr.URL)
		}
		return refused
	}
	if errors.Is(err, errTooManyRedirects) {
		return fmt.Errorf("fetch %s: stopped after %d redirects", u.Redacted(), f.maxRedirects)
	}
	if ctx.Err() != nil {
		if context.Cause(ctx) == errFetchTimeout {
			return fmt.Errorf("fetch %s: no complete response within %s", u.Redacted(), f.timeout)
		}
		return fmt.Errorf("fetch %s: %w", u.Redacted(), ctx.Err()) // the run was abandoned
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
		return fmt.Errorf("fetch %s: host %s not found", u.Redacted(), dnsErr.Name)
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("fetch %s: %w", u.Redacted(), err)
}

// contentKind says how fetch_url renders a media type: "html", "text", or "" for
// types it refuses.
func contentKind(mediaType string) string {
	switch mediaType {
	case "text/html", "application/xhtml+xml":
		return "html"
	case "text/plain", "text/markdown", "text/x-markdown", "application/json", "text/json":
		return "text"
	}
	if strings.HasPrefix(mediaType, "application/") && strings.HasSuffix(mediaType, "+json") {
		return "text" // application/ld+json, application/problem+json, …
	}
	return ""
}

// cutText returns s cut to at most n runes, at a line or word break among its last
// 200 runes when there is one.
func cutText(s string, n int) string { return textcut.AtBreak(s, n, 200, "\n ") }
