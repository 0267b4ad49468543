package emulator

import (
	"net"
	"net/http"
	"strings"
)

// The emulator listens on a local port that every web page the developer
// opens can send requests to. These checks keep those pages out (docs/playground.md,
// "Playground security"):
//
//   - Host must name the bound address or localhost, so that a page on a
//     domain rebound to 127.0.0.1 (DNS rebinding) gets 421 and reads nothing.
//   - A POST, PUT, PATCH or DELETE from another origin gets 403
//     (http.CrossOriginProtection: Sec-Fetch-Site, else Origin against Host).
//     Go clients such as slack-go send neither header and pass.
//   - A WebSocket upgrade must come from the same origin, from no browser
//     (no Origin), or from slack-go, which says "Origin: https://api.slack.com".
//
// Hardened adds random tokens, tokens from the Authorization header only, no
// GET for Web API methods that write, and a session cookie for the
// playground's /ui/ endpoints.

// slackGoOrigin is the Origin header slack-go's socketmode client (v0.34)
// sends on its WebSocket upgrade.
const slackGoOrigin = "https://api.slack.com"

// hostGuard keeps other web pages out of the emulator's routes: it knows the
// address the emulator is bound to.
type hostGuard struct {
	base string // "http://127.0.0.1:port"
	ip   net.IP // the bound address
	port string // the bound port
}

// wrap wraps the emulator's routes with the Host and cross-origin checks.
func (g hostGuard) wrap(next http.Handler) http.Handler {
	csrf := http.NewCrossOriginProtection()
	csrf.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "cross-origin request refused", http.StatusForbidden)
	}))
	checked := csrf.Handler(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.allowedHost(r.Host) {
			http.Error(w, "unknown Host "+r.Host+"; use "+g.base, http.StatusMisdirectedRequest)
			return
		}
		checked.ServeHTTP(w, r)
	})
}

// allowedHost reports whether a Host header names this server: its port,
// and localhost, a loopback IP address or the bound IP address (any IP
// address when bound to all interfaces). A DNS name other than localhost
// is refused: with DNS rebinding it can be any page's.
func (g hostGuard) allowedHost(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		host, port = hostport, "80"
	}
	if port != g.port {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return false
	case ip.IsLoopback(), ip.Equal(g.ip):
		return true
	}
	return g.ip.IsUnspecified()
}

// checkSocketOrigin is the WebSocket upgrader's CheckOrigin: no Origin (not a
// browser), the same origin, or slack-go's.
func checkSocketOrigin(r *http.Request) bool {
	origin := r.Header.Get("Origin")
	return origin == "" || origin == slackGoOrigin || strings.EqualFold(origin, "http://"+r.Host)
}
