package api

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestKeyring(t *testing.T) {
	tokens, err := ParseTokens(" ci-bot:secret-number-one-123;scope=admin , portal:secret-number-two-456;scope=runs:read,")
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
		if tok, ok := k.match(c.secret); tok.Name != c.name || ok != c.ok {
			t.Errorf("match(%q) = %q, %v; want %q, %v", c.secret, tok.Name, ok, c.name, c.ok)
		}
	}
}

// TestParseTokensScopes: scopes, a channel allowlist and trust are read from each
// token's attributes; admin grants all but the direct-message scope; a token in the
// format before scopes, an unknown scope or attribute, and a bad channel id are
// refused with the way forward and without the secret.
func TestParseTokensScopes(t *testing.T) {
	const secret = "secret-number-one-123"
	tokens, err := ParseTokens("ci:" + secret + ";scope=runs:read  runs:write;channels=C01 C02, up:" + secret + "x;scope=knowledge:write admin;trusted")
	if err != nil {
		t.Fatal(err)
	}
	ci, up := tokens[0], tokens[1]
	switch {
	case !ci.Has(ScopeRunsWrite) || ci.Has(ScopeKnowledgeRead) || ci.Trusted || len(ci.Channels) != 2:
		t.Errorf("ci = %+v", ci)
	case !ci.MayChannel("C02") || ci.MayChannel("C03") || ci.MayChannel("D01"):
		t.Errorf("ci's channels: %+v", ci.Channels)
	case !up.Trusted || !up.Has(ScopeRunsRead) || up.Has(ScopeConversationsReadDM) || up.MayChannel("D0ALICE") || !up.MayChannel("C09"):
		t.Errorf("up = %+v", up)
	}
	dm := Token{Scopes: []Scope{ScopeConversationsRead, ScopeConversationsReadDM}}
	if !dm.MayChannel("D0ALICE") || !dm.MayChannel("G0GROUP") {
		t.Errorf("the DM scope does not open direct messages")
	}
	for in, want := range map[string]string{
		"ci:" + secret:                                    `token "ci": no scope: append ;scope= with what it needs`,
		"ci:" + secret + ";scope=runs:delete":             `token "ci": unknown scope "runs:delete": use runs:read, runs:write`,
		"ci:" + secret + ";scopes=runs:read":              `token "ci": unknown attribute "scopes"`,
		"ci:" + secret + ";scope=admin;channels=#general": `token "ci": channels: "#general" is not a channel id`,
	} {
		_, err := ParseTokens(in)
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), secret) {
			t.Errorf("ParseTokens(%q) = %v; want %q…", in, err, want)
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
