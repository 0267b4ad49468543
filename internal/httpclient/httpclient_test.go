package httpclient_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/threadwright/threadwright/internal/httpclient"
)

func TestNew(t *testing.T) {
	c := httpclient.New()
	if c.Timeout != 0 {
		t.Errorf("Timeout = %s, want 0 (streams are bounded by their context)", c.Timeout)
	}
	tr, ok := c.Transport.(*http.Transport)
	if !ok {
		t.Fatalf("Transport is %T", c.Transport)
	}
	if tr.MaxIdleConnsPerHost != httpclient.MaxIdleConnsPerHost || tr.MaxIdleConns != httpclient.MaxIdleConns ||
		tr.IdleConnTimeout != httpclient.IdleConnTimeout || !tr.ForceAttemptHTTP2 || tr.Proxy == nil ||
		tr.TLSHandshakeTimeout != httpclient.TLSHandshakeTimeout || tr.ResponseHeaderTimeout != httpclient.ResponseHeaderTimeout {
		t.Errorf("transport settings: %+v", tr)
	}
	if httpclient.NewTransport() == tr {
		t.Error("NewTransport returned a shared transport")
	}
}

// barrierServer starts a test server that counts the connections it accepts and
// holds each request until n requests are being answered at once, so that a round of
// n concurrent calls needs n connections; a request to /warm it answers at once.
// start, when given, starts the server instead of Start.
func barrierServer(t *testing.T, n int, start ...func(*httptest.Server)) (srv *httptest.Server, conns *atomic.Int64) {
	t.Helper()
	conns = new(atomic.Int64)
	var (
		mu      sync.Mutex
		waiting int
		release = make(chan struct{})
	)
	srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/warm" { // answered at once
			io.WriteString(w, "ok")
			return
		}
		mu.Lock()
		waiting++
		gate := release
		if waiting == n {
			waiting = 0
			close(release)
			release = make(chan struct{})
		}
		mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	if len(start) > 0 {
		start[0](srv)
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv, conns
}

// round makes n concurrent GET requests with c, reading each body to its end.
func round(t *testing.T, c *http.Client, url string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if _, err := io.Copy(io.Discard, resp.Body); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}

func TestConnectionsReused(t *testing.T) {
	const n = 64
	t.Run("New", func(t *testing.T) {
		srv, conns := barrierServer(t, n)
		c := httpclient.New()
		round(t, c, srv.URL, n)
		if got := conns.Load(); got != n {
			t.Fatalf("first round opened %d connections, want %d", got, n)
		}
		round(t, c, srv.URL, n)
		if got := conns.Load() - n; got != 0 {
			t.Errorf("second round opened %d new connections, want 0", got)
		}
	})
	// The test would catch a transport that keeps too few idle connections: Go's
	// default keeps 2 per host.
	t.Run("DefaultTransportDoesNot", func(t *testing.T) {
		srv, conns := barrierServer(t, n)
		c := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		round(t, c, srv.URL, n)
		round(t, c, srv.URL, n)
		if got := conns.Load() - n; got < n/2 {
			t.Errorf("second round opened %d new connections; want most of %d", got, n)
		}
	})
}

// TestSlackConnectionsBounded: NewSlack's calls beyond SlackConnsPerHost wait for a
// connection instead of dialling one, and the connections stay for the next burst.
// The server holds each request until SlackConnsPerHost are in flight, so a burst of
// three times as many calls goes through in three waves on the same connections; an
// unbounded transport dials one connection per call of the burst.
func TestSlackConnectionsBounded(t *testing.T) {
	const n = httpclient.SlackConnsPerHost
	srv, conns := barrierServer(t, n)
	c := httpclient.NewSlack()
	round(t, c, srv.URL, 3*n)
	if got := conns.Load(); got != n {
		t.Fatalf("a burst of %d calls opened %d connections, want %d", 3*n, got, n)
	}
	round(t, c, srv.URL, 3*n)
	if got := conns.Load() - n; got != 0 {
		t.Errorf("the second burst opened %d new connections, want 0", got)
	}
}

// TestSlackHTTP2: over HTTP/2 SlackConnsPerHost bounds connections, not calls:
// more calls than it are answered at once, on one warm connection. The server holds
// each request until all are in flight (fewer than the 250 streams Go's server
// allows on a connection).
func TestSlackHTTP2(t *testing.T) {
	const n = httpclient.SlackConnsPerHost + 72
	srv, conns := barrierServer(t, n, func(s *httptest.Server) {
		s.EnableHTTP2 = true
		s.StartTLS()
	})
	tr := httpclient.NewSlackTransport()
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	c := &http.Client{Transport: httpclient.BearerToken(tr)}
	// One call first, as the program's auth.test: until a connection's handshake says
	// HTTP/2, a burst dials one per call (up to SlackConnsPerHost) and keeps one.
	round(t, c, srv.URL+"/warm", 1)
	round(t, c, srv.URL, n)
	if got := conns.Load(); got != 1 {
		t.Errorf("%d calls at once opened %d connections, want 1", n, got)
	}
}

func TestHTTP2(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)

	tr := httpclient.NewTransport()
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	c := &http.Client{Transport: tr}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			defer resp.Body.Close()
			if b, _ := io.ReadAll(resp.Body); string(b) != "HTTP/2.0" {
				t.Errorf("protocol %q, want HTTP/2.0", b)
			}
		})
	}
	wg.Wait()
}

// NewModelTransport keeps an idle connection for each call in flight, and never
// fewer than NewTransport.
func TestNewModelTransport(t *testing.T) {
	for _, c := range []struct{ inFlight, perHost, all int }{
		{500, 500, 500}, {200, 200, httpclient.MaxIdleConns}, {1, httpclient.MaxIdleConnsPerHost, httpclient.MaxIdleConns},
	} {
		tr := httpclient.NewModelTransport(c.inFlight)
		if tr.MaxIdleConnsPerHost != c.perHost || tr.MaxIdleConns != c.all {
			t.Errorf("NewModelTransport(%d): %d idle a host, %d in all; want %d and %d", c.inFlight, tr.MaxIdleConnsPerHost, tr.MaxIdleConns, c.perHost, c.all)
		}
	}
}
