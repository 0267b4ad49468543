package web_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents/web"
)

// The Downloader sends the bot token only to its hosts, refuses other hosts before
// any request, and refuses a body over its byte bound.
func TestDownloader(t *testing.T) {
	var auths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
		switch r.URL.Path {
		case "/big":
			w.Write([]byte(strings.Repeat("x", 2000)))
		case "/redirect":
			http.Redirect(w, r, "http://example.invalid/elsewhere", http.StatusFound)
		default:
			w.Write([]byte("hello"))
		}
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	d, err := web.NewDownloader(web.FetchConfig{}, []string{"files.slack.com", host}, "xoxb-token", 1000)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	body, err := d.Download(ctx, srv.URL+"/files/F1/a.txt")
	if err != nil || string(body) != "hello" {
		t.Fatalf("Download = %q, %v", body, err)
	}
	if len(auths) != 1 || auths[0] != "Bearer xoxb-token" {
		t.Fatalf("Authorization headers %q, want the bot token once", auths)
	}
	if _, err := d.Download(ctx, srv.URL+"/big"); !errors.Is(err, web.ErrTooLarge) {
		t.Fatalf("a 2000-byte body: err = %v, want ErrTooLarge", err)
	}
	if _, err := d.Download(ctx, srv.URL+"/redirect"); err == nil {
		t.Fatal("a redirect off the file hosts was followed")
	}
	n := len(auths)
	for _, u := range []string{"https://evil.example/files/F1", "http://files.slack.com/F1", "ftp://" + host + "/x"} {
		if _, err := d.Download(ctx, u); err == nil {
			t.Errorf("Download(%s) succeeded, want a refusal", u)
		}
	}
	if len(auths) != n {
		t.Fatal("a refused URL was requested")
	}
	if !d.Allowed("https://files.slack.com/files-pri/T1-F1/a.png") {
		t.Fatal("Slack's file host is not allowed")
	}
}
