package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// ErrAddressRefused is wrapped by the error of a fetch_url run whose URL's host is, or
// resolves to, an address fetch_url must not reach (loopback, private, link-local, …).
// Test with errors.Is.
var ErrAddressRefused = errors.New("agents: address refused")

// fetchGuard decides which addresses fetch_url may reach.
type fetchGuard struct {
	allowPrivate bool
	hosts        map[string]bool // "name", "ip", "name:port", "[ip]:port"; lower case
	suffixes     []string        // ".corp.example" from "*.corp.example"
	prefixes     []netip.Prefix  // CIDR entries, matched against resolved addresses
	dialer       net.Dialer
}

// newFetchGuard builds the guard of FetchConfig's AllowPrivate and AllowHosts. It
// drops unusable allowHosts entries and reports them in the error.
func newFetchGuard(allowPrivate bool, allowHosts []string) (*fetchGuard, error) {
	g := &fetchGuard{
		allowPrivate: allowPrivate,
		hosts:        make(map[string]bool),
		dialer:       net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second},
	}
	var errs []error
	for _, entry := range allowHosts {
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

// transport is an HTTP transport that dials through the guard and uses no proxy (a
// proxy would dial the target itself, past the guard); responseHeader bounds the wait
// for a response's header.
func (g *fetchGuard) transport(responseHeader time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           g.dialContext,
		ForceAttemptHTTP2:     true, // not implied once DialContext is set
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: responseHeader,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
	}
}
