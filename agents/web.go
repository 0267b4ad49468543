package agents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/htmltext"
	"github.com/threadwright/threadwright/internal/textcut"
)

// WebCategory is the category of the web tools, fetch_url and web_search.
const WebCategory = "Web"

// Defaults of FetchConfig and SearchConfig.
const (
	DefaultFetchMaxBytes     = 1 << 20 // 1 MiB
	DefaultFetchTimeout      = 15 * time.Second
	DefaultFetchMaxRedirects = 5
	DefaultFetchMaxChars     = 20_000
	DefaultSearchTimeout     = 15 * time.Second
	DefaultSearchLimit       = 5
)

// webUserAgent is the User-Agent header of the web tools' requests.
const webUserAgent = "threadwright/1 (+https://github.com/threadwright/threadwright)"

// ErrAddressRefused is wrapped by the error of a fetch_url run whose URL's host is, or
// resolves to, an address fetch_url must not reach (loopback, private, link-local, …).
// Test with errors.Is.
var ErrAddressRefused = errors.New("agents: address refused")

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
	_, err := newFetchGuard(c)
	return err
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
func FetchURLTool(cfg FetchConfig) (ToolSpec, Tool) {
	f := newFetcher(cfg)
	spec := ToolSpec{
		Name: "fetch_url",
		Description: "Fetch a public web page or file by its http(s) URL and return its readable text: " +
			"HTML as text with its title, headings and links, plain text and JSON as they are. " +
			"Use it to read a page the user mentions or a search result.",
		Category: WebCategory,
		Parameters: json.RawMessage(`{"type":"object","properties":{"url":{"type":"string",` +
			`"description":"the absolute http or https URL to fetch"}},"required":["url"]}`),
		// Longer than the fetch's own timeout, so that its clearer message wins.
		Timeout: f.timeout + 5*time.Second,
		// A GET that changes nothing, of a page anyone may have written.
		ReadOnly: true, Untrusted: true,
	}
	return spec, ToolFunc(f.run)
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
	guard, _ := newFetchGuard(cfg) // unusable entries are dropped; Validate reports them
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
		Transport: &http.Transport{
			Proxy:                 nil, // a proxy would dial the target itself, past the guard
			DialContext:           guard.dialContext,
			ForceAttemptHTTP2:     true, // not implied once DialContext is set
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: f.timeout,
			MaxIdleConns:          16,
			IdleConnTimeout:       90 * time.Second,
		},
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
	ReportEntities(ctx, conversation.Entity{ID: p.final.Redacted(), Title: strings.Join(strings.Fields(p.title), " "), Type: "web page"}) // contract.go
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
	req.Header.Set("User-Agent", webUserAgent)
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
	mediaType, params, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
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
		body = trimPartialRune(body[:f.maxBytes])
	}
	if mediaType == "" {
		mediaType, params, _ = mime.ParseMediaType(http.DetectContentType(body))
		if kind = contentKind(mediaType); kind == "" {
			return page{}, fmt.Errorf("fetch %s: the response looks like %s; fetch_url reads only HTML, plain text and JSON", final.Redacted(), mediaType)
		}
	}

	p := page{url: u, final: final, text: decodeText(body, params["charset"]), mediaType: mediaType, kind: kind, bytesCut: bytesCut}
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

// fetchGuard decides which addresses fetch_url may reach.
type fetchGuard struct {
	allowPrivate bool
	hosts        map[string]bool // "name", "ip", "name:port", "[ip]:port"; lower case
	suffixes     []string        // ".corp.example" from "*.corp.example"
	prefixes     []netip.Prefix  // CIDR entries, matched against resolved addresses
	dialer       net.Dialer
}

// newFetchGuard builds the guard of cfg. It drops unusable AllowHosts entries and
// reports them in the error.
func newFetchGuard(cfg FetchConfig) (*fetchGuard, error) {
	g := &fetchGuard{
		allowPrivate: cfg.AllowPrivate,
		hosts:        make(map[string]bool),
		dialer:       net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second},
	}
	var errs []error
	for _, entry := range cfg.AllowHosts {
		e := strings.ToLower(strings.TrimSpace(entry))
		switch {
		case e == "":
			errs = append(errs, errors.New("fetch allow-list: empty entry"))
		case strings.Contains(e, "/"):
			p, err := netip.ParsePrefix(e)
			if err != nil {
				errs = append(errs, fmt.Errorf("fetch allow-list: %q is not a CIDR prefix", entry))
				continue
			}
			g.prefixes = append(g.prefixes, p.Masked())
		case strings.HasPrefix(e, "*."):
			g.suffixes = append(g.suffixes, normalizeHost(e[1:]))
		default:
			host, port, err := net.SplitHostPort(e)
			if err != nil { // no port
				g.hosts[normalizeHost(e)] = true
				continue
			}
			if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
				errs = append(errs, fmt.Errorf("fetch allow-list: %q has a bad port", entry))
				continue
			}
			g.hosts[net.JoinHostPort(normalizeHost(host), port)] = true
		}
	}
	return g, errors.Join(errs...)
}

// normalizeHost lower-cases a host and drops IPv6 brackets and a trailing dot.
func normalizeHost(h string) string {
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(strings.ToLower(h), ".")
}

// hostAllowed reports whether an AllowHosts name entry matches host and port.
func (g *fetchGuard) hostAllowed(host, port string) bool {
	host = normalizeHost(host)
	if g.hosts[host] || g.hosts[net.JoinHostPort(host, port)] {
		return true
	}
	for _, s := range g.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// checkURL refuses what can be refused before connecting: a scheme other than http
// and https, a missing host, a literal address fetch_url must not reach, and numeric
// hosts that are not standard IP literals ("2130706433", "0x7f.1"), which some
// resolvers read as addresses. Host names are checked when dialled.
func (g *fetchGuard) checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("fetch_url reads only http and https URLs, not %s", u.Redacted())
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("fetch_url needs a URL with a host, not %s", u.Redacted())
	}
	if g.allowPrivate {
		return nil
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if g.hostAllowed(host, port) {
		return nil
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return g.checkAddr(host, ip)
	}
	if numericHost(host) {
		return fmt.Errorf("fetch_url refuses %s: write IP addresses in standard dotted or IPv6 form", host)
	}
	return nil
}

// numericHost reports whether every label of host is a decimal or hex number, as in
// the legacy IPv4 forms "127.1" and "0x7f000001".
func numericHost(host string) bool {
	for label := range strings.SplitSeq(strings.TrimSuffix(host, "."), ".") {
		digits, base := label, 10
		if len(label) > 2 && (label[:2] == "0x" || label[:2] == "0X") {
			digits, base = label[2:], 16
		}
		if _, err := strconv.ParseUint(digits, base, 64); err != nil {
			return false
		}
	}
	return true
}

// checkAddr returns an *addressError if fetch_url must not reach ip; host is what the
// URL named, for the message.
func (g *fetchGuard) checkAddr(host string, ip netip.Addr) error {
	if g.allowPrivate {
		return nil
	}
	reason := blockedReason(ip)
	if reason == "" {
		return nil
	}
	plain := ip.WithZone("").Unmap()
	for _, p := range g.prefixes {
		if p.Contains(plain) {
			return nil
		}
	}
	return &addressError{host: host, addr: ip, reason: reason}
}

// dialContext is the transport's dialer. Unless the host is allowed outright, a
// ControlContext hook checks each address the host resolved to just before its
// connection is made. A refusal is returned in preference to the other addresses'
// dial errors.
func (g *fetchGuard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if g.allowPrivate || g.hostAllowed(host, port) {
		return g.dialer.DialContext(ctx, network, addr)
	}
	// Happy Eyeballs may dial two addresses at once.
	var (
		mu      sync.Mutex
		refused error
	)
	d := g.dialer
	d.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("fetch_url cannot check address %q: %w", address, err)
		}
		if err := g.checkAddr(host, ap.Addr()); err != nil {
			mu.Lock()
			if refused == nil {
				refused = err
			}
			mu.Unlock()
			return err
		}
		return nil
	}
	conn, err := d.DialContext(ctx, network, addr)
	if err != nil {
		mu.Lock()
		defer mu.Unlock()
		if refused != nil {
			return nil, refused
		}
	}
	return conn, err
}

// addressError is fetch_url's refusal of an address; it wraps ErrAddressRefused.
type addressError struct {
	host   string // as the URL named it
	addr   netip.Addr
	reason string // "loopback", "private", …
}

func (e *addressError) Error() string {
	target := e.addr.String()
	if h := normalizeHost(e.host); h != "" && h != target {
		target = h + " (" + target + ")"
	}
	return fmt.Sprintf("fetch_url refuses %s: %s addresses are not allowed", target, e.reason)
}

func (e *addressError) Unwrap() error { return ErrAddressRefused }

// specialPrefixes are IANA special-purpose ranges (RFC 6890 and the registries it
// set up) that netip's predicates do not cover and that are no public destination.
var specialPrefixes = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"}, // "this network"
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},    // IETF protocol assignments
	{netip.MustParsePrefix("192.0.2.0/24"), "reserved"},    // documentation
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},   // benchmarking
	{netip.MustParsePrefix("198.51.100.0/24"), "reserved"}, // documentation
	{netip.MustParsePrefix("203.0.113.0/24"), "reserved"},  // documentation
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},     // and 255.255.255.255
	{netip.MustParsePrefix("::/96"), "reserved"},           // IPv4-compatible, deprecated
	{netip.MustParsePrefix("::ffff:0:0:0/96"), "reserved"}, // IPv4-translated
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private"},   // local-use NAT64
	{netip.MustParsePrefix("100::/64"), "reserved"},        // discard
	{netip.MustParsePrefix("2001::/32"), "reserved"},       // Teredo
	{netip.MustParsePrefix("2001:db8::/32"), "reserved"},   // documentation
	{netip.MustParsePrefix("3fff::/20"), "reserved"},       // documentation
	{netip.MustParsePrefix("fec0::/10"), "private"},        // site-local, deprecated
}

// IPv6 ranges that embed an IPv4 address a gateway would connect to.
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052: IPv4 in the last 4 bytes
	sixToFour = netip.MustParsePrefix("2002::/16")    // RFC 3056: IPv4 in bytes 2 to 5
)

// blockedReason returns why fetch_url must not reach ip ("loopback", "private", …),
// or "" for a public unicast address. IPv4-mapped IPv6 addresses are judged as IPv4.
func blockedReason(ip netip.Addr) string {
	ip = ip.WithZone("").Unmap()
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip.IsPrivate():
		return "private"
	}
	for _, s := range specialPrefixes {
		if s.prefix.Contains(ip) {
			return s.reason
		}
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return blockedReason(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(ip):
		return blockedReason(netip.AddrFrom4([4]byte(b[2:6])))
	}
	return ""
}

// trimPartialRune drops an incomplete UTF-8 sequence that a cut left at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if c < utf8.RuneSelf {
			return b // ASCII: nothing pending
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			return b
		}
	}
	return b
}

// decodeText returns body as a string. Without a usable charset, text that is not
// valid UTF-8 is read as Windows-1252 (the web's fallback, a superset of ISO-8859-1);
// text in other declared charsets keeps its ASCII, and the rest becomes U+FFFD.
func decodeText(body []byte, charset string) string {
	switch strings.ToLower(strings.TrimSpace(charset)) {
	case "iso-8859-1", "latin1", "latin-1", "l1", "iso_8859-1", "windows-1252", "cp1252", "us-ascii", "ascii":
		return decodeWindows1252(body)
	case "", "utf-8", "utf8":
		if utf8.Valid(body) {
			return string(body)
		}
		return decodeWindows1252(body)
	}
	return strings.ToValidUTF8(string(body), "\uFFFD")
}

// windows1252 maps the bytes 0x80 to 0x9F of Windows-1252; the others are ISO-8859-1,
// whose bytes are their code points.
var windows1252 = [32]rune{
	'€', '\u0081', '‚', 'ƒ', '„', '…', '†', '‡', 'ˆ', '‰', 'Š', '‹', 'Œ', '\u008d', 'Ž', '\u008f',
	'\u0090', '‘', '’', '“', '”', '•', '–', '—', '˜', '™', 'š', '›', 'œ', '\u009d', 'ž', 'Ÿ',
}

func decodeWindows1252(body []byte) string {
	var b strings.Builder
	b.Grow(len(body))
	for _, c := range body {
		switch {
		case c < 0x80:
			b.WriteByte(c)
		case c < 0xA0:
			b.WriteRune(windows1252[c-0x80])
		default:
			b.WriteRune(rune(c))
		}
	}
	return b.String()
}

// cutText returns s cut to at most n runes, at a line or word break among its last
// 200 runes when there is one.
func cutText(s string, n int) string { return textcut.AtBreak(s, n, 200, "\n ") }

// SearchConfig configures the web_search tool (WebSearchTool).
type SearchConfig struct {
	// SearxngURL is the base URL of a SearXNG instance whose JSON API is enabled
	// ("json" in search.formats of its settings.yml), e.g. "https://searx.corp.example"
	// or "http://searxng:8080/searx"; a URL ending in "/search" is used as it is. Empty
	// leaves web_search out. The instance is chosen by the operator, so it may be on a
	// private address.
	SearxngURL string
	// Timeout bounds one search; default DefaultSearchTimeout, 15 s.
	Timeout time.Duration
	// Limit is the number of results returned; default DefaultSearchLimit, 5.
	Limit int
}

// WebSearchTool returns the web_search tool, {"query": "…"}, which searches the web
// through a SearXNG instance's JSON API (GET <base>/search?q=…&format=json, as in
// https://docs.searxng.org/dev/search_api) and lists the first cfg.Limit results,
// numbered, each with its title, URL and snippet. ok is false when no provider is
// configured (cfg.SearxngURL is empty): leave the tool out of the registry then. A
// SearxngURL that is not an absolute http(s) URL gives a tool whose runs fail saying
// so.
func WebSearchTool(cfg SearchConfig) (spec ToolSpec, tool Tool, ok bool) {
	base := strings.TrimSpace(cfg.SearxngURL)
	if base == "" {
		return ToolSpec{}, nil, false
	}
	s := &searcher{timeout: cfg.Timeout, limit: cfg.Limit}
	if s.timeout <= 0 {
		s.timeout = DefaultSearchTimeout
	}
	if s.limit <= 0 {
		s.limit = DefaultSearchLimit
	}
	s.endpoint, s.err = searchEndpoint(base)
	transport := http.DefaultTransport.(*http.Transport).Clone()
	s.client = &http.Client{Transport: transport}
	spec = ToolSpec{
		Name: "web_search",
		Description: "Search the web. Returns numbered results, each with a title, URL and snippet; " +
			"read a result in full with fetch_url.",
		Category: WebCategory,
		Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string",` +
			`"description":"the search query, as you would type it into a search engine"}},"required":["query"]}`),
		Timeout:  s.timeout + 5*time.Second,
		ReadOnly: true, Untrusted: true, // titles and snippets anyone may have written
	}
	return spec, ToolFunc(s.run), true
}

// searchEndpoint returns the /search URL of a SearXNG base URL.
func searchEndpoint(base string) (*url.URL, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("web_search is misconfigured: the SearXNG URL %q is not an absolute http(s) URL", base)
	}
	u.RawQuery, u.Fragment = "", ""
	if !strings.HasSuffix(strings.TrimSuffix(u.Path, "/"), "/search") {
		u = u.JoinPath("search")
	}
	return u, nil
}

// searcher runs web_search.
type searcher struct {
	endpoint *url.URL
	err      error // of a misconfigured endpoint
	client   *http.Client
	timeout  time.Duration
	limit    int
}

// maxSearchResponse bounds the bytes of a SearXNG answer read.
const maxSearchResponse = 4 << 20

// maxSnippet bounds a result's snippet, in characters.
const maxSnippet = 400

// searxngResponse is the part of SearXNG's JSON answer web_search reads.
type searxngResponse struct {
	Results []struct {
		Title   string `json:"title"`
		URL     string `json:"url"`
		Content string `json:"content"`
	} `json:"results"`
	// Answers are strings in older SearXNG versions, objects with "answer" in newer.
	Answers []json.RawMessage `json:"answers"`
}

func (s *searcher) run(ctx context.Context, raw json.RawMessage) (string, error) {
	if s.err != nil {
		return "", s.err
	}
	var args struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		return "", fmt.Errorf("invalid arguments: %w", err)
	}
	query := strings.Join(strings.Fields(args.Query), " ")
	switch {
	case query == "":
		return "", errors.New("web_search needs a non-empty query")
	case utf8.RuneCountInString(query) > 500:
		return "", errors.New("web_search query longer than 500 characters")
	}

	ctx, cancel := context.WithTimeoutCause(ctx, s.timeout, errSearchTimeout)
	defer cancel()
	u := *s.endpoint
	u.RawQuery = url.Values{"q": {query}, "format": {"json"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return "", fmt.Errorf("web_search: %w", err)
	}
	req.Header.Set("User-Agent", webUserAgent)
	req.Header.Set("Accept", "application/json")
	resp, err := s.client.Do(req)
	if err != nil {
		return "", s.explain(ctx, err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusForbidden:
		return "", errors.New("web_search: the SearXNG instance refused the JSON format (HTTP 403); " +
			"its settings.yml must list json in search.formats")
	case resp.StatusCode == http.StatusTooManyRequests:
		return "", errors.New("web_search: the search service is rate limiting; try again later")
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return "", fmt.Errorf("web_search: the search service answered HTTP %s", resp.Status)
	}
	var answer searxngResponse
	if err := json.NewDecoder(io.LimitReader(resp.Body, maxSearchResponse)).Decode(&answer); err != nil {
		if ctx.Err() != nil {
			return "", s.explain(ctx, err)
		}
		return "", fmt.Errorf("web_search: unreadable answer from the search service: %w", err)
	}
	ReportEntities(ctx, searchEntities(answer, s.limit)...) // contract.go
	return formatSearch(query, answer, s.limit), nil
}

// searchEntities returns the results formatSearch lists, as the session context's
// entities: id the URL, title the result's title, type "web result".
func searchEntities(answer searxngResponse, limit int) []conversation.Entity {
	var out []conversation.Entity
	for _, r := range answer.Results {
		link := strings.TrimSpace(r.URL)
		if link == "" {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, conversation.Entity{ID: link, Title: strings.Join(strings.Fields(r.Title), " "), Type: "web result"})
	}
	return out
}

var errSearchTimeout = errors.New("search timeout")

// explain turns a failed search request into the error the model reads.
func (s *searcher) explain(ctx context.Context, err error) error {
	switch {
	case context.Cause(ctx) == errSearchTimeout:
		return fmt.Errorf("web_search: the search service did not answer within %s", s.timeout)
	case ctx.Err() != nil:
		return fmt.Errorf("web_search: %w", ctx.Err()) // the run was abandoned
	}
	var uerr *url.Error
	if errors.As(err, &uerr) {
		err = uerr.Err
	}
	return fmt.Errorf("web_search: the search service is unreachable: %w", err)
}

// formatSearch lists up to limit results of answer, numbered.
func formatSearch(query string, answer searxngResponse, limit int) string {
	var b strings.Builder
	for _, raw := range answer.Answers {
		var text string
		if json.Unmarshal(raw, &text) != nil {
			var obj struct {
				Answer string `json:"answer"`
			}
			_ = json.Unmarshal(raw, &obj)
			text = obj.Answer
		}
		if text = strings.Join(strings.Fields(text), " "); text != "" {
			fmt.Fprintf(&b, "Answer: %s\n", text)
		}
	}
	n := 0
	for _, r := range answer.Results {
		link := strings.TrimSpace(r.URL)
		if link == "" {
			continue
		}
		if n == limit {
			break
		}
		n++
		if n == 1 {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			fmt.Fprintf(&b, "Results for %q:\n", query)
		}
		title := strings.Join(strings.Fields(r.Title), " ")
		if title == "" {
			title = link
		}
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", n, title, link)
		if snippet := strings.Join(strings.Fields(r.Content), " "); snippet != "" {
			if cut := cutText(snippet, maxSnippet); cut != snippet {
				snippet = cut + " …"
			}
			fmt.Fprintf(&b, "   %s\n", snippet)
		}
	}
	if n == 0 {
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "No results for %q.", query)
	}
	return strings.TrimRight(b.String(), "\n")
}
