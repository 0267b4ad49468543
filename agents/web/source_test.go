package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents/web"
)

// sourcePages serves an HTML article, a long plain text, a 500, and a page that
// answers only when the request ends (its ctx).
func sourcePages(t *testing.T) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/article", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte(`<html><head><title>Async  stand-ups</title><script>var x = "hidden";</script></head>
<body><nav>Home | About</nav><main><h1>Why write</h1><p>Teams that <b>write</b> their stand-ups save time.</p>
<ul><li>Fewer meetings</li></ul></main></body></html>`))
	})
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte(strings.Repeat("word ", 2000)))
	})
	mux.HandleFunc("/broken", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestSourceFetcher(t *testing.T) {
	srv := sourcePages(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	allowed := web.NewSourceFetcher(web.FetchConfig{AllowHosts: []string{host}, MaxBytes: 1000})
	ctx := context.Background()

	t.Run("HTML", func(t *testing.T) {
		p, err := allowed.FetchSource(ctx, srv.URL+"/article#top")
		if err != nil {
			t.Fatal(err)
		}
		if p.Title != "Async stand-ups" || p.URL != srv.URL+"/article" {
			t.Errorf("page = %+v", p)
		}
		for _, want := range []string{"# Why write", "Teams that write their stand-ups save time.", "- Fewer meetings"} {
			if !strings.Contains(p.Text, want) {
				t.Errorf("text lacks %q:\n%s", want, p.Text)
			}
		}
		if strings.Contains(p.Text, "hidden") || strings.Contains(p.Text, "<p>") || strings.Contains(p.Text, "About") {
			t.Errorf("text keeps markup, scripts or navigation:\n%s", p.Text)
		}
	})
	t.Run("SizeLimit", func(t *testing.T) {
		p, err := allowed.FetchSource(ctx, srv.URL+"/long")
		if err != nil {
			t.Fatal(err)
		}
		if body, _, _ := strings.Cut(p.Text, "\n\n[cut"); len(body) > 1000 || !strings.HasSuffix(p.Text, "[cut: the page is longer than this]") {
			t.Errorf("text of a 10,000-byte page with MaxBytes 1000: %d bytes, ending %q", len(p.Text), p.Text[max(0, len(p.Text)-50):])
		}
	})
	t.Run("HTTPError", func(t *testing.T) {
		_, err := allowed.FetchSource(ctx, srv.URL+"/broken")
		if err == nil || !strings.Contains(err.Error(), "HTTP 500") {
			t.Errorf("error = %v; want HTTP 500", err)
		}
	})
	t.Run("PrivateRefused", func(t *testing.T) {
		guarded := web.NewSourceFetcher(web.FetchConfig{})
		_, err := guarded.FetchSource(ctx, srv.URL+"/article")
		if !errors.Is(err, web.ErrAddressRefused) {
			t.Errorf("error = %v; want ErrAddressRefused", err)
		}
		_, err = guarded.FetchSource(ctx, "ftp://example.com/x")
		if err == nil || !strings.Contains(err.Error(), "only http and https") {
			t.Errorf("ftp error = %v", err)
		}
	})
	t.Run("Ctx", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			_, err := allowed.FetchSource(ctx, srv.URL+"/hang")
			errc <- err
		}()
		cancel()
		err := <-errc
		var uerr *url.Error
		if !errors.Is(err, context.Canceled) || errors.As(err, &uerr) && uerr.Timeout() {
			t.Errorf("error after cancel = %v; want context.Canceled", err)
		}
	})
}
