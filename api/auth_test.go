package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestKeyring(t *testing.T) {
	tokens, err := ParseTokens(" ci-bot:secret-number-one-123 , portal:secret-number-two-456,")
	if err != nil || len(tokens) != 2 || tokens[1].Name != "portal" || tokens[0].Actor() != "api:ci-bot" {
		t.Fatalf("ParseTokens = %+v, %v", tokens, err)
	}
	k := newKeyring(tokens)
	for _, c := range []struct {
		secret, name string
		ok           bool
	}{
		{"secret-number-one-123", "ci-bot", true},
		{"secret-number-two-456", "portal", true},
		{"secret-number-two-45", "", false},
		{"secret-number-two-4567", "", false},
		{"", "", false},
	} {
		if name, ok := k.match(c.secret); name != c.name || ok != c.ok {
			t.Errorf("match(%q) = %q, %v; want %q, %v", c.secret, name, ok, c.name, c.ok)
		}
	}
}

func TestMuxVerbs(t *testing.T) {
	m := newMux()
	got := ""
	for _, verb := range []string{"approve", "request-changes"} {
		m.HandleFunc("POST /v1/runs/{id}/artifacts/{artifact}:"+verb, func(w http.ResponseWriter, r *http.Request) {
			got = verb + " " + r.PathValue("id") + " " + r.PathValue("artifact")
		})
	}
	for _, c := range []struct {
		path, want string
		status     int
	}{
		{"/v1/runs/T1-C1-1.2/artifacts/plan:approve", "approve T1-C1-1.2 plan", http.StatusOK},
		{"/v1/runs/T1-C1-1.2/artifacts/a:b:request-changes", "request-changes T1-C1-1.2 a:b", http.StatusOK},
		{"/v1/runs/T1-C1-1.2/artifacts/plan:delete", "", http.StatusNotFound},
		{"/v1/runs/T1-C1-1.2/artifacts/plan", "", http.StatusNotFound},
		{"/v2/elsewhere", "", http.StatusNotFound},
	} {
		got = ""
		w := httptest.NewRecorder()
		m.ServeHTTP(w, httptest.NewRequest("POST", c.path, nil))
		if got != c.want || w.Code != c.status {
			t.Errorf("POST %s ran %q with %d; want %q with %d", c.path, got, w.Code, c.want, c.status)
		}
		if w.Code == http.StatusNotFound && w.Header().Get("Content-Type") != "application/problem+json" {
			t.Errorf("POST %s: 404 as %q", c.path, w.Header().Get("Content-Type"))
		}
	}
}
