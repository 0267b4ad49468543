package main

import "testing"

// TestReadyzURL: the healthcheck asks /readyz where the server listens, for every
// form of HTTP_ADDR that net.Listen (and so the server) takes: a wildcard or empty
// host is asked on 127.0.0.1, and a named port is asked by its number.
func TestReadyzURL(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080/readyz",
		"0.0.0.0:8080":   "http://127.0.0.1:8080/readyz",
		":8080":          "http://127.0.0.1:8080/readyz",
		"[::]:8080":      "http://127.0.0.1:8080/readyz",
		"[::1]:9090":     "http://[::1]:9090/readyz",
		"localhost:9090": "http://localhost:9090/readyz",
		"0.0.0.0:http":   "http://127.0.0.1:80/readyz",
		"10.1.2.3:8080":  "http://10.1.2.3:8080/readyz",
	} {
		got, err := readyzURL(addr)
		if err != nil || got != want {
			t.Errorf("readyzURL(%q) = %q, %v; want %q", addr, got, err, want)
		}
	}
	for _, addr := range []string{"", "8080", "0.0.0.0:nosuchport"} {
		if got, err := readyzURL(addr); err == nil {
			t.Errorf("readyzURL(%q) = %q; want an error", addr, got)
		}
	}
}
