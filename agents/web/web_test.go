package web_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// runFetch runs fetch_url under cfg on rawURL.
func runFetch(tb testing.TB, cfg web.FetchConfig, rawURL string) (string, error) {
	tb.Helper()
	_, tool := web.FetchURLTool(cfg)
	args, err := json.Marshal(map[string]string{"url": rawURL})
	if err != nil {
		tb.Fatal(err)
	}
	return tool.Run(context.Background(), args)
}

// countingServer is an httptest server that counts the connections made to it.
type countingServer struct {
	*httptest.Server
	conns atomic.Int64
}

// MustWebServer starts an HTTP server for h on 127.0.0.1, closed with the test.
func MustWebServer(tb testing.TB, h http.Handler) *countingServer {
	tb.Helper()
	s := &countingServer{Server: httptest.NewUnstartedServer(h)}
	s.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.Start()
	tb.Cleanup(s.Close)
	return s
}

// port returns the server's port.
func (s *countingServer) port(tb testing.TB) string {
	tb.Helper()
	u, err := url.Parse(s.URL)
	if err != nil {
		tb.Fatal(err)
	}
	return u.Port()
}

const releaseNotes = `<!DOCTYPE html>
<html><head><title> Release
  notes </title>
<style>body { color: red }</style>
<script>var s = "<p>not text</p>";</script>
</head>
<body>
<header><a href="/">Home</a> <nav><a href="/a">A</a></nav></header>
<nav><ul><li><a href="/docs">Docs</a></li></ul></nav>
<main>
<article>
<header><h1>Version 2.0</h1></header>
<p>Threadwright   now <b>streams</b> answers.
See <a href="/guide?x=1#setup">the guide</a>, <a href="https://example.org/x">https://example.org/x</a>
and <a href="#top">the top</a>.</p>
<h2>Changes</h2>
<ul>
  <li>Faster &amp; smaller</li>
  <li>New <a href="javascript:void(0)">tools</a>
    <ul><li>fetch_url</li></ul>
  </li>
</ul>
<div hidden>secret</div><span aria-hidden="true">icon</span>
<table><tr><th>Name</th><th>Value</th></tr><tr><td>a</td><td> 1 </td></tr></table>
<p><a href="/logo"><img src="logo.png" alt="Logo"></a> caf&eacute;<br>next line</p>
<pre>line 1
  line 2</pre>
<footer>Posted by Ada</footer>
</article>
</main>
<aside>Related: nothing</aside>
<footer>Copyright 2024</footer>
<noscript>Enable JS</noscript>
</body></html>`

const releaseNotesText = `Title: Release notes

# Version 2.0

Threadwright now streams answers. See the guide (BASE/guide?x=1#setup), https://example.org/x and the top.

## Changes

- Faster & smaller
- New tools
  - fetch_url

Name | Value
a | 1

Logo (BASE/logo) café
next line

` + "```" + `
line 1
  line 2
` + "```" + `

Posted by Ada

Related: nothing`

func TestFetchURL(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/notes", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") == "" {
			t.Error("no User-Agent")
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, releaseNotes)
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "hello\n  <b>world</b>\n")
	})
	mux.HandleFunc("/json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"items": [1, 2], "html": "<p>"}`)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=ISO-8859-1")
		w.Write([]byte("caf\xe9 \x93quoted\x94"))
	})
	mux.HandleFunc("/sniffed", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no header: fetch_url sniffs
		fmt.Fprint(w, "<html><body><p>sniffed page</p></body></html>")
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, strings.Repeat("é", 3000)) // 6,000 bytes
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("x", 1000))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		fmt.Fprint(w, "start")
		w.(http.Flusher).Flush()
		select { // the body never ends
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
			return
		}
		fmt.Fprint(w, "arrived")
	})
	mux.HandleFunc("/pdf", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		fmt.Fprint(w, "%PDF-1.4")
	})
	mux.HandleFunc("/binary", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil
		w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00"))
	})
	srv := MustWebServer(t, mux)
	cfg := web.FetchConfig{AllowPrivate: true}

	t.Run("HTML", func(t *testing.T) {
		got, err := runFetch(t, cfg, srv.URL+"/notes#frag")
		if err != nil {
			t.Fatal(err)
		}
		want := "URL: " + srv.URL + "/notes\n" + strings.ReplaceAll(releaseNotesText, "BASE", srv.URL)
		if got != want {
			t.Errorf("got:\n%s\n\nwant:\n%s", got, want)
		}
	})
	tests := []struct {
		name, path string
		cfg        web.FetchConfig
		want       string
	}{
		{"PlainText", "/text", cfg, "URL: SRV/text\nContent-Type: text/plain\n\nhello\n  <b>world</b>"},
		{"JSON", "/json", cfg, "URL: SRV/json\nContent-Type: application/json\n\n" + `{"items": [1, 2], "html": "<p>"}`},
		{"Latin1", "/latin1", cfg, "URL: SRV/latin1\nContent-Type: text/plain\n\ncafé “quoted”"},
		{"Sniffed", "/sniffed", cfg, "URL: SRV/sniffed\n\nsniffed page"},
		{"SizeLimit", "/big", web.FetchConfig{AllowPrivate: true, MaxBytes: 1001},
			"URL: SRV/big\nContent-Type: text/plain\n\n" + strings.Repeat("é", 500) +
				"\n\n[cut: the response is longer than 1001 bytes; only the first 1001 were read]"},
		{"CharLimit", "/long", web.FetchConfig{AllowPrivate: true, MaxChars: 100},
			"URL: SRV/long\nContent-Type: text/plain\n\n" + strings.Repeat("x", 100) +
				"\n\n[cut: the text has 1000 characters; only the first 100 are shown]"},
		{"FiveRedirects", "/hop/5", cfg, "URL: SRV/hop/0\nRedirected from: SRV/hop/5\nContent-Type: text/plain\n\narrived"},
		{"NoRedirects", "/hop/0", web.FetchConfig{AllowPrivate: true, MaxRedirects: -1}, "URL: SRV/hop/0\nContent-Type: text/plain\n\narrived"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runFetch(t, tt.cfg, srv.URL+tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.ReplaceAll(tt.want, "SRV", srv.URL); got != want {
				t.Errorf("got:\n%q\nwant:\n%q", got, want)
			}
		})
	}

	failures := []struct {
		name, url string
		cfg       web.FetchConfig
		want      string
	}{
		{"SixRedirects", "SRV/hop/6", cfg, "fetch SRV/hop/6: stopped after 5 redirects"},
		{"RedirectsOff", "SRV/hop/1", web.FetchConfig{AllowPrivate: true, MaxRedirects: -1}, "fetch SRV/hop/1: stopped after 0 redirects"},
		{"UnsupportedType", "SRV/pdf", cfg, "fetch SRV/pdf: the response is application/pdf; fetch_url reads only HTML, plain text and JSON"},
		{"SniffedBinary", "SRV/binary", cfg, "fetch SRV/binary: the response looks like image/png; fetch_url reads only HTML, plain text and JSON"},
		{"NotFound", "SRV/missing", cfg, "fetch SRV/missing: HTTP 404 Not Found"},
		{"FileScheme", "file:///etc/passwd", cfg, `fetch_url reads only http and https URLs, not file:///etc/passwd`},
		{"FTP", "ftp://example.org/x", cfg, `fetch_url reads only http and https URLs, not ftp://example.org/x`},
		{"Relative", "/etc/passwd", cfg, `fetch_url needs an absolute http or https URL, not "/etc/passwd"`},
		{"Empty", "", cfg, `fetch_url needs an absolute http or https URL, not ""`},
		{"NoHost", "http:///x", cfg, `fetch_url needs a URL with a host, not http:///x`},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runFetch(t, tt.cfg, strings.ReplaceAll(tt.url, "SRV", srv.URL))
			if want := strings.ReplaceAll(tt.want, "SRV", srv.URL); err == nil || err.Error() != want {
				t.Errorf("err = %v, want %s (result %q)", err, want, got)
			}
		})
	}

	t.Run("Timeout", func(t *testing.T) {
		start := time.Now()
		_, err := runFetch(t, web.FetchConfig{AllowPrivate: true, Timeout: 200 * time.Millisecond}, srv.URL+"/slow")
		if want := "fetch " + srv.URL + "/slow: no complete response within 200ms"; err == nil || err.Error() != want {
			t.Errorf("err = %v, want %s", err, want)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %s", d)
		}
	})

	t.Run("Cancelled", func(t *testing.T) {
		_, tool := web.FetchURLTool(cfg)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := tool.Run(ctx, json.RawMessage(`{"url":"`+srv.URL+`/text"}`))
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
	})

	t.Run("Parallel", func(t *testing.T) {
		_, tool := web.FetchURLTool(cfg)
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				out, err := tool.Run(context.Background(), json.RawMessage(`{"url":"`+srv.URL+`/hop/2"}`))
				if err != nil || !strings.HasSuffix(out, "arrived") {
					t.Errorf("Run = %q, %v", out, err)
				}
			})
		}
		wg.Wait()
	})
}

// A page of unclosed list items, under the 1 MiB fetch_url reads, once made the
// converter's memory grow with the square of its size and took the bot down
// (finding F1). Now its text is converted only as far as can be shown.
func TestFetchURLHostileHTML(t *testing.T) {
	page := strings.Repeat("<ul><li>item ", 800<<10/13)
	srv := MustWebServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, page)
	}))
	got, err := runFetch(t, web.FetchConfig{AllowPrivate: true, MaxChars: 1000}, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	want := "URL: " + srv.URL + "\n\n- item\n  - item\n    - item\n"
	if !strings.HasPrefix(got, want) {
		t.Errorf("got %.200q…; want it to start %q", got, want)
	}
	// Cut at a word among the first 1,000 characters, of the 4 × 1,001 bytes converted.
	if cut := regexp.MustCompile(`\n\n\[cut: the text has more than 39\d\d characters; only the first 9\d\d are shown\]$`); !cut.MatchString(got) {
		t.Errorf("got …%q; want it to end %s", got[max(len(got)-200, 0):], cut)
	}
	if len(got) > 2000 {
		t.Errorf("got %d bytes; want at most 2,000", len(got))
	}
}

func TestFetchURLSpec(t *testing.T) {
	spec, tool := web.FetchURLTool(web.FetchConfig{})
	if spec.Name != "fetch_url" || spec.Category != "Web" {
		t.Errorf("spec = %+v", spec)
	}
	if spec.Timeout <= web.DefaultFetchTimeout {
		t.Errorf("spec.Timeout = %s, want more than the fetch's own %s", spec.Timeout, web.DefaultFetchTimeout)
	}
	if err := agents.NewRegistry().Register(spec, tool); err != nil {
		t.Fatal(err)
	}
	if _, err := tool.Run(context.Background(), json.RawMessage(`{"url":`)); err == nil {
		t.Error("bad arguments accepted")
	}
}

func TestFetchURLRefusesAddresses(t *testing.T) {
	// Literal addresses are refused before any request, so none of these touches the
	// network; the ports are irrelevant.
	tests := []struct {
		name, url, want string
	}{
		{"Loopback", "http://127.0.0.1:8080/", "fetch_url refuses 127.0.0.1: loopback addresses are not allowed"},
		{"LoopbackRange", "http://127.3.4.5/", "fetch_url refuses 127.3.4.5: loopback addresses are not allowed"},
		{"IPv6Loopback", "http://[::1]:8080/", "fetch_url refuses ::1: loopback addresses are not allowed"},
		{"IPv4MappedLoopback", "http://[::ffff:127.0.0.1]/", "fetch_url refuses ::ffff:127.0.0.1: loopback addresses are not allowed"},
		{"IPv4MappedHex", "https://[::ffff:7f00:1]/", "fetch_url refuses ::ffff:7f00:1 (::ffff:127.0.0.1): loopback addresses are not allowed"},
		{"IPv4MappedMetadata", "http://[::ffff:169.254.169.254]/", "fetch_url refuses ::ffff:169.254.169.254: link-local addresses are not allowed"},
		{"Private10", "http://10.0.0.1/", "fetch_url refuses 10.0.0.1: private addresses are not allowed"},
		{"Private172", "http://172.16.5.4/", "fetch_url refuses 172.16.5.4: private addresses are not allowed"},
		{"Private192", "https://192.168.1.1/admin", "fetch_url refuses 192.168.1.1: private addresses are not allowed"},
		{"Metadata", "http://169.254.169.254/latest/meta-data/", "fetch_url refuses 169.254.169.254: link-local addresses are not allowed"},
		{"Unspecified", "http://0.0.0.0:8080/", "fetch_url refuses 0.0.0.0: unspecified addresses are not allowed"},
		{"ThisNetwork", "http://0.1.2.3/", "fetch_url refuses 0.1.2.3: unspecified addresses are not allowed"},
		{"IPv6Unspecified", "http://[::]/", "fetch_url refuses ::: unspecified addresses are not allowed"},
		{"CGNAT", "http://100.64.0.1/", "fetch_url refuses 100.64.0.1: shared (CGNAT) addresses are not allowed"},
		{"Multicast", "http://239.1.2.3/", "fetch_url refuses 239.1.2.3: multicast addresses are not allowed"},
		{"LinkLocalMulticast", "http://224.0.0.251/", "fetch_url refuses 224.0.0.251: link-local addresses are not allowed"},
		{"Broadcast", "http://255.255.255.255/", "fetch_url refuses 255.255.255.255: reserved addresses are not allowed"},
		{"UniqueLocal", "http://[fd12:3456::1]/", "fetch_url refuses fd12:3456::1: private addresses are not allowed"},
		{"UniqueLocalFC", "http://[fc00::1]/", "fetch_url refuses fc00::1: private addresses are not allowed"},
		{"LinkLocal6", "http://[fe80::1]/", "fetch_url refuses fe80::1: link-local addresses are not allowed"},
		{"LinkLocal6Zone", "http://[fe80::1%25eth0]/", "fetch_url refuses fe80::1%eth0: link-local addresses are not allowed"},
		{"Multicast6", "http://[ff0e::1]/", "fetch_url refuses ff0e::1: multicast addresses are not allowed"},
		{"LinkLocalMulticast6", "http://[ff02::1]/", "fetch_url refuses ff02::1: link-local addresses are not allowed"},
		{"NAT64Loopback", "http://[64:ff9b::7f00:1]/", "fetch_url refuses 64:ff9b::7f00:1: loopback addresses are not allowed"},
		{"SixToFourPrivate", "http://[2002:a00:1::]/", "fetch_url refuses 2002:a00:1::: private addresses are not allowed"},
		{"Decimal", "http://2130706433/", "fetch_url refuses 2130706433: write IP addresses in standard dotted or IPv6 form"},
		{"Hex", "http://0x7f.1/", "fetch_url refuses 0x7f.1: write IP addresses in standard dotted or IPv6 form"},
		{"Short", "http://127.1/", "fetch_url refuses 127.1: write IP addresses in standard dotted or IPv6 form"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := runFetch(t, web.FetchConfig{}, tt.url)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v, want %s", err, tt.want)
			}
			if strings.Contains(tt.want, "addresses are not allowed") && !errors.Is(err, web.ErrAddressRefused) {
				t.Errorf("err = %v, want ErrAddressRefused", err)
			}
		})
	}
}

// A host name is checked on the address it resolves to, when the connection is
// dialled: the server behind it sees no connection.
func TestFetchURLRefusesAtDial(t *testing.T) {
	target := MustWebServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "internal secret")
	}))
	port := target.port(t)

	t.Run("Localhost", func(t *testing.T) {
		_, err := runFetch(t, web.FetchConfig{}, "http://localhost:"+port+"/")
		if !errors.Is(err, web.ErrAddressRefused) || !strings.Contains(err.Error(), "fetch_url refuses localhost (") ||
			!strings.HasSuffix(err.Error(), "loopback addresses are not allowed") {
			t.Errorf("err = %v, want a loopback refusal of localhost", err)
		}
	})

	redirector := MustWebServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if to := r.URL.Query().Get("to"); to != "" {
			http.Redirect(w, r, to, http.StatusFound)
			return
		}
		fmt.Fprint(w, "public page")
	}))
	// Only the redirector's exact host and port is allowed.
	allowRedirector := web.FetchConfig{AllowHosts: []string{"127.0.0.1:" + redirector.port(t)}}

	t.Run("AllowedHost", func(t *testing.T) {
		got, err := runFetch(t, allowRedirector, redirector.URL+"/")
		if err != nil || !strings.HasSuffix(got, "public page") {
			t.Errorf("Run = %q, %v", got, err)
		}
	})
	t.Run("RedirectToName", func(t *testing.T) {
		to := "http://localhost:" + port + "/secret"
		_, err := runFetch(t, allowRedirector, redirector.URL+"/?to="+url.QueryEscape(to))
		if !errors.Is(err, web.ErrAddressRefused) || !strings.Contains(err.Error(), "loopback addresses are not allowed (redirected from ") ||
			!strings.HasSuffix(err.Error(), " to "+to+")") {
			t.Errorf("err = %v, want a loopback refusal after the redirect", err)
		}
	})
	t.Run("RedirectToLiteral", func(t *testing.T) {
		to := "http://127.0.0.1:" + port + "/secret"
		_, err := runFetch(t, allowRedirector, redirector.URL+"/?to="+url.QueryEscape(to))
		if !errors.Is(err, web.ErrAddressRefused) || !strings.HasPrefix(err.Error(), "fetch_url refuses 127.0.0.1: loopback addresses are not allowed") {
			t.Errorf("err = %v, want a loopback refusal after the redirect", err)
		}
	})
	t.Run("RedirectToMetadata", func(t *testing.T) {
		_, err := runFetch(t, allowRedirector, redirector.URL+"/?to="+url.QueryEscape("http://169.254.169.254/latest/meta-data/"))
		if !errors.Is(err, web.ErrAddressRefused) || !strings.Contains(err.Error(), "link-local") {
			t.Errorf("err = %v, want a link-local refusal", err)
		}
	})
	if n := target.conns.Load(); n != 0 {
		t.Errorf("the refused server saw %d connections", n)
	}

	allowed := []struct {
		name  string
		hosts []string
		url   string
	}{
		{"Name", []string{"LOCALHOST"}, "http://localhost:" + port + "/"},
		{"NamePort", []string{"localhost:" + port}, "http://localhost:" + port + "/"},
		{"CIDR", []string{"127.0.0.0/8", "::1/128"}, "http://localhost:" + port + "/"},
		{"IP", []string{"127.0.0.1"}, target.URL},
	}
	for _, tt := range allowed {
		t.Run("Allow"+tt.name, func(t *testing.T) {
			got, err := runFetch(t, web.FetchConfig{AllowHosts: tt.hosts}, tt.url)
			if err != nil || !strings.HasSuffix(got, "internal secret") {
				t.Errorf("Run = %q, %v", got, err)
			}
		})
	}
	refusedStill := []struct {
		name  string
		hosts []string
	}{
		{"OtherPort", []string{"localhost:1"}},
		{"WildcardIsNotApex", []string{"*.localhost"}},
		{"OtherCIDR", []string{"10.0.0.0/8"}},
	}
	for _, tt := range refusedStill {
		t.Run("Refuse"+tt.name, func(t *testing.T) {
			_, err := runFetch(t, web.FetchConfig{AllowHosts: tt.hosts}, "http://localhost:"+port+"/")
			if !errors.Is(err, web.ErrAddressRefused) {
				t.Errorf("err = %v, want ErrAddressRefused", err)
			}
		})
	}
}

func TestFetchConfigValidate(t *testing.T) {
	good := web.FetchConfig{AllowHosts: []string{"wiki.corp.example", "wiki.corp.example:8080", "*.corp.example", "10.0.0.0/8", "[fd00::1]:443", "fd00::1"}}
	if err := good.Validate(); err != nil {
		t.Errorf("Validate = %v", err)
	}
	for _, entry := range []string{"", "10.0.0.0/33", "not/a/prefix", "host:0", "host:http"} {
		cfg := web.FetchConfig{AllowHosts: []string{entry}}
		if err := cfg.Validate(); err == nil {
			t.Errorf("Validate accepted %q", entry)
		}
	}
}

// fakeSearxng answers /searx/search like a SearXNG instance with JSON enabled.
func fakeSearxng(tb testing.TB) *countingServer {
	tb.Helper()
	return MustWebServer(tb, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case r.URL.Path != "/searx/search":
			http.NotFound(w, r)
			return
		case q.Get("format") != "json":
			http.Error(w, "format", http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch q.Get("q") {
		case "nothing":
			fmt.Fprint(w, `{"query":"nothing","results":[],"answers":[]}`)
		case "forbidden":
			http.Error(w, "Forbidden", http.StatusForbidden)
		case "slow":
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		default:
			results := []map[string]string{{"title": "no url"}}
			for i := 1; i <= 7; i++ {
				results = append(results, map[string]string{
					"title":   fmt.Sprintf(" Result\n%d ", i),
					"url":     fmt.Sprintf("https://example.org/%d", i),
					"content": fmt.Sprintf("About   %s,\n number %d.", q.Get("q"), i),
					"engine":  "fake",
				})
			}
			results[2]["content"] = ""
			json.NewEncoder(w).Encode(map[string]any{
				"query":   q.Get("q"),
				"results": results,
				"answers": []any{"42", map[string]string{"answer": "forty-two", "url": "https://example.org/a"}},
			})
		}
	}))
}

func runSearch(tb testing.TB, cfg web.SearchConfig, query string) (string, error) {
	tb.Helper()
	_, tool, ok := web.SearchTool(cfg)
	if !ok {
		tb.Fatal("web_search absent")
	}
	args, _ := json.Marshal(map[string]string{"query": query})
	return tool.Run(context.Background(), args)
}

func TestWebSearch(t *testing.T) {
	srv := fakeSearxng(t)
	base := srv.URL + "/searx/"

	t.Run("Results", func(t *testing.T) {
		got, err := runSearch(t, web.SearchConfig{SearxngURL: base}, "  threadwright\nslack bot ")
		if err != nil {
			t.Fatal(err)
		}
		want := `Answer: 42
Answer: forty-two

Results for "threadwright slack bot":

1. Result 1
   https://example.org/1
   About threadwright slack bot, number 1.

2. Result 2
   https://example.org/2

3. Result 3
   https://example.org/3
   About threadwright slack bot, number 3.

4. Result 4
   https://example.org/4
   About threadwright slack bot, number 4.

5. Result 5
   https://example.org/5
   About threadwright slack bot, number 5.`
		if got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("Limit", func(t *testing.T) {
		got, err := runSearch(t, web.SearchConfig{SearxngURL: srv.URL + "/searx/search", Limit: 1}, "go")
		if err != nil || !strings.Contains(got, "1. Result 1") || strings.Contains(got, "2. ") {
			t.Errorf("Run = %q, %v", got, err)
		}
	})
	t.Run("NoResults", func(t *testing.T) {
		got, err := runSearch(t, web.SearchConfig{SearxngURL: base}, "nothing")
		if err != nil || got != `No results for "nothing".` {
			t.Errorf("Run = %q, %v", got, err)
		}
	})

	failures := []struct {
		name  string
		cfg   web.SearchConfig
		query string
		want  string
	}{
		{"JSONDisabled", web.SearchConfig{SearxngURL: base}, "forbidden",
			"web_search: the SearXNG instance refused the JSON format (HTTP 403); its settings.yml must list json in search.formats"},
		{"WrongPath", web.SearchConfig{SearxngURL: srv.URL + "/other"}, "go", "web_search: the search service answered HTTP 404 Not Found"},
		{"Timeout", web.SearchConfig{SearxngURL: base, Timeout: 100 * time.Millisecond}, "slow",
			"web_search: the search service did not answer within 100ms"},
		{"EmptyQuery", web.SearchConfig{SearxngURL: base}, " \n ", "web_search needs a non-empty query"},
		{"LongQuery", web.SearchConfig{SearxngURL: base}, strings.Repeat("a", 501), "web_search query longer than 500 characters"},
		{"Misconfigured", web.SearchConfig{SearxngURL: "searx.corp.example"}, "go",
			`web_search is misconfigured: the SearXNG URL "searx.corp.example" is not an absolute http(s) URL`},
	}
	for _, tt := range failures {
		t.Run(tt.name, func(t *testing.T) {
			got, err := runSearch(t, tt.cfg, tt.query)
			if err == nil || err.Error() != tt.want {
				t.Errorf("Run = %q, %v; want error %s", got, err, tt.want)
			}
		})
	}
}

func TestSearchTool(t *testing.T) {
	t.Run("Unconfigured", func(t *testing.T) {
		for _, u := range []string{"", "  "} {
			if _, tool, ok := web.SearchTool(web.SearchConfig{SearxngURL: u}); ok || tool != nil {
				t.Errorf("SearchTool(%q) = %v, %v; want absent", u, tool, ok)
			}
		}
	})
	t.Run("Configured", func(t *testing.T) {
		spec, tool, ok := web.SearchTool(web.SearchConfig{SearxngURL: "https://searx.example"})
		if !ok || spec.Name != "web_search" || spec.Category != web.Category {
			t.Fatalf("SearchTool = %+v, %v", spec, ok)
		}
		r := agents.NewRegistry()
		r.MustRegister(spec, tool)
		r.MustRegister(web.FetchURLTool(web.FetchConfig{}))
		if got := r.Categories(); len(got) != 1 || got[0].Name != "Web" || len(got[0].Tools) != 2 {
			t.Errorf("Categories = %+v", got)
		}
	})
}

// fetch_url refuses addresses the model should not reach; the executor hands the
// error to the model as the tool's result.
func ExampleFetchURLTool() {
	reg := agents.NewRegistry()
	reg.MustRegister(web.FetchURLTool(web.FetchConfig{}))
	if spec, tool, ok := web.SearchTool(web.SearchConfig{SearxngURL: ""}); ok {
		reg.MustRegister(spec, tool) // not reached: no search provider configured
	}

	_, tool, _ := reg.Lookup("fetch_url")
	_, err := tool.Run(context.Background(), json.RawMessage(`{"url":"http://127.0.0.1:8080/admin"}`))
	fmt.Println(reg.Names())
	fmt.Println("error:", err)
	// Output:
	// [fetch_url]
	// error: fetch_url refuses 127.0.0.1: loopback addresses are not allowed
}

// TestWebToolsReportEntities: fetch_url reports the page it read and web_search its
// results (the ones it lists) as entities.
func TestWebToolsReportEntities(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><head><title>Status  page</title></head><body>All green.</body></html>")
	}))
	defer page.Close()
	search := fakeSearxng(t)
	reg := agents.NewRegistry()
	reg.MustRegister(web.FetchURLTool(web.FetchConfig{AllowPrivate: true}))
	spec, tool, _ := web.SearchTool(web.SearchConfig{SearxngURL: search.URL + "/searx/", Limit: 2})
	reg.MustRegister(spec, tool)
	srv := openaitest.NewServer()
	defer srv.Close()
	srv.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{Name: "fetch_url", Arguments: fmt.Sprintf(`{"url":%q}`, page.URL)},
			{Name: "web_search", Arguments: `{"query":"status"}`},
		}},
		openaitest.Response{Text: "Green."},
	)
	exec := agents.NewExecutor(agents.ExecutorConfig{Client: agents.NewClient(agents.ClientConfig{BaseURL: srv.URL(), MaxRetries: -1}), Model: "m", Registry: reg})
	f, err := exec.Execute(context.Background(), conversation.Prompt{Text: "status?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []conversation.Entity{
		{ID: page.URL, Title: "Status page", Type: "web page", Trust: conversation.EntityUntrusted},
		{ID: "https://example.org/1", Title: "Result 1", Type: "web result", Trust: conversation.EntityUntrusted},
		{ID: "https://example.org/2", Title: "Result 2", Type: "web result", Trust: conversation.EntityUntrusted},
	}
	if fmt.Sprint(f.Entities) != fmt.Sprint(want) {
		t.Fatalf("entities %+v, want %+v", f.Entities, want)
	}
}
