package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestDebugAddr: DEBUG_ADDR binds loopback unless DEBUG_ADDR_REMOTE says otherwise.
func TestDebugAddr(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		want string // the error's start; "" for none
	}{
		{"Unset", map[string]string{"DEBUG_ADDR": ""}, ""},
		{"Loopback", map[string]string{"DEBUG_ADDR": "127.0.0.1:6060"}, ""},
		{"PortOnly", map[string]string{"DEBUG_ADDR": ":6060"}, ""},
		{"Localhost", map[string]string{"DEBUG_ADDR": "localhost:6060"}, ""},
		{"IPv6Loopback", map[string]string{"DEBUG_ADDR": "[::1]:6060"}, ""},
		{"AllInterfaces", map[string]string{"DEBUG_ADDR": "0.0.0.0:6060"}, "DEBUG_ADDR: expected a loopback address"},
		{"OtherHost", map[string]string{"DEBUG_ADDR": "10.0.0.5:6060"}, "DEBUG_ADDR: expected a loopback address"},
		{"RemoteAllowed", map[string]string{"DEBUG_ADDR": "0.0.0.0:6060", "DEBUG_ADDR_REMOTE": "true"}, ""},
		{"NoPort", map[string]string{"DEBUG_ADDR": "6060"}, "DEBUG_ADDR: expected host:port"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.env)
			var c Config
			err := LoadConfig(&c)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("error %q; want none", err)
			case tt.want != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.want)):
				t.Fatalf("error %q; want one starting %q", err, tt.want)
			}
		})
	}
}

// TestServeDebug: an address without a host is served on loopback, with pprof's
// index and profiles; none is served when the address is empty.
func TestServeDebug(t *testing.T) {
	if s, err := serveDebug("", slog.New(slog.NewTextHandler(io.Discard, nil))); s != nil || err != nil {
		t.Fatalf("serveDebug(\"\") = %v, %v; want nothing served", s, err)
	}
	s, err := serveDebug(":0", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	host, _, _ := net.SplitHostPort(s.addr)
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Errorf("served on %s; want loopback", s.addr)
	}
	for path, want := range map[string]string{"/debug/pprof/": "goroutine", "/debug/pprof/goroutine?debug=1": "goroutine profile"} {
		resp, err := http.Get("http://" + s.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), want) {
			t.Errorf("GET %s: %d %.200q; want 200 with %q", path, resp.StatusCode, body, want)
		}
	}
}
