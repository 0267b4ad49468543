package emulator_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/internal/httpclient"
	"github.com/threadwright/threadwright/playground/emulator"
)

// send sends req with client (http.DefaultClient when nil) and returns the status
// and body of the answer.
func send(tb testing.TB, client *http.Client, req *http.Request) (int, string) {
	tb.Helper()
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// apiRequest is a Web API call of method with form, the bot token in the header.
func apiRequest(emu *emulator.Server, method string, form url.Values) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, emu.URL()+method, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Authorization", "Bearer "+emu.Config().BotToken)
	return req
}

// port is emu's port.
func port(emu *emulator.Server) string {
	u, _ := url.Parse(emu.URL())
	return u.Port()
}

// TestForeignHostRefused: a Host other than the bound address or localhost (a DNS
// name rebound to 127.0.0.1) gets 421 on every route and reaches no method.
func TestForeignHostRefused(t *testing.T) {
	for _, hardened := range []bool{false, true} {
		emu := MustStart(t, emulator.Config{Hardened: hardened})
		p := port(emu)
		for _, host := range []string{"rebind.attacker.example:" + p, "attacker.example", "127.0.0.1:1", "localhost.attacker.example:" + p, "10.1.2.3:" + p} {
			for _, path := range []string{"/", "/ui/state", "/api/auth.test"} {
				req, _ := http.NewRequest(http.MethodGet, emu.PageURL()+path[1:], nil)
				req.Host = host
				req.Header.Set("Authorization", "Bearer "+emu.Config().BotToken)
				if status, body := send(t, nil, req); status != http.StatusMisdirectedRequest {
					t.Errorf("hardened=%v Host %s %s: %d %s, want 421", hardened, host, path, status, body)
				}
			}
		}
		if calls := emu.Calls(""); len(calls) != 0 {
			t.Errorf("hardened=%v: a refused Host reached %d methods", hardened, len(calls))
		}
		for _, host := range []string{"127.0.0.1:" + p, "localhost:" + p, "LOCALHOST:" + p, "[::1]:" + p} {
			req := apiRequest(emu, "auth.test", nil)
			req.Host = host
			if status, body := send(t, nil, req); status != http.StatusOK || !strings.Contains(body, `"ok":true`) {
				t.Errorf("hardened=%v Host %s: %d %s", hardened, host, status, body)
			}
		}
	}
}

// TestCrossOriginPostRefused: a POST from another origin (a web page the developer
// visits) gets 403, to the Web API and to the playground, and changes nothing; the
// same request from the page's own origin, or with no Origin (a Go client), passes.
func TestCrossOriginPostRefused(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	own := strings.TrimSuffix(emu.PageURL(), "/")
	post := func(origin, fetchSite string) (int, string) {
		req := apiRequest(emu, "chat.postMessage", url.Values{"channel": {"C0GENERAL"}, "text": {"from " + origin}})
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		if fetchSite != "" {
			req.Header.Set("Sec-Fetch-Site", fetchSite)
		}
		return send(t, nil, req)
	}
	for _, tc := range []struct{ origin, fetchSite string }{
		{"http://attacker.example", ""},
		{"http://attacker.example", "cross-site"},
		{"null", ""},
		{"http://127.0.0.1:1", ""},          // another local port
		{"http://localhost:1", "same-site"}, // another local port, as browsers say it
		{"", "cross-site"},
	} {
		if status, body := post(tc.origin, tc.fetchSite); status != http.StatusForbidden {
			t.Errorf("Origin %q, Sec-Fetch-Site %q: %d %s, want 403", tc.origin, tc.fetchSite, status, body)
		}
	}
	uiReq, _ := http.NewRequest(http.MethodPost, emu.PageURL()+"ui/post",
		strings.NewReader(`{"user":"U0ALICE","channel":"C0GENERAL","text":"hi"}`))
	uiReq.Header.Set("Content-Type", "application/json")
	uiReq.Header.Set("Origin", "http://attacker.example")
	if status, body := send(t, nil, uiReq); status != http.StatusForbidden {
		t.Errorf("playground post from another origin: %d %s, want 403", status, body)
	}
	if msgs := emu.Thread("C0GENERAL", ""); len(msgs) != 0 || len(emu.Calls("")) != 0 {
		t.Fatalf("cross-origin posts got through: %+v", msgs)
	}

	for _, tc := range []struct{ origin, fetchSite string }{{own, "same-origin"}, {own, ""}, {"", ""}} {
		if status, body := post(tc.origin, tc.fetchSite); status != http.StatusOK || !strings.Contains(body, `"ok":true`) {
			t.Errorf("Origin %q, Sec-Fetch-Site %q: %d %s", tc.origin, tc.fetchSite, status, body)
		}
	}
	if n := len(emu.Thread("C0GENERAL", "")); n != 3 {
		t.Errorf("%d same-origin posts, want 3", n)
	}
}

// TestCrossOriginWebSocketRefused: a WebSocket upgrade from another origin gets 403
// and does not use up its ticket; the same ticket then connects from the same
// origin. slack-go's own Origin passes (TestSocketModeEvents and the others).
func TestCrossOriginWebSocketRefused(t *testing.T) {
	emu := MustStart(t, emulator.Config{Hardened: true})
	api := slack.New(emu.Config().BotToken, slack.OptionAPIURL(emu.URL()),
		slack.OptionAppLevelToken(emu.Config().AppToken), slack.OptionHTTPClient(httpclient.NewSlack()))
	_, wsURL, err := api.StartSocketModeContext(testContext(t))
	if err != nil {
		t.Fatal(err)
	}
	dial := func(origin string) (*websocket.Conn, *http.Response, error) {
		return websocket.DefaultDialer.DialContext(testContext(t), wsURL, http.Header{"Origin": {origin}})
	}
	for _, origin := range []string{"http://attacker.example", "null", "http://localhost:1"} {
		ws, resp, err := dial(origin)
		if err == nil {
			ws.Close()
			t.Fatalf("Origin %s: upgraded", origin)
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("Origin %s: %v, want 403", origin, err)
		}
	}
	if n := emu.NumConnections(); n != 0 {
		t.Fatalf("%d connections after cross-origin upgrades", n)
	}
	ws, _, err := dial(strings.TrimSuffix(emu.PageURL(), "/"))
	if err != nil {
		t.Fatalf("same-origin upgrade with the unused ticket: %v", err)
	}
	defer ws.Close()
	if err := emu.WaitForConnections(testContext(t), 1); err != nil {
		t.Fatal(err)
	}
}

// TestHardenedTokenOnlyInHeader: a hardened emulator refuses a valid token given as
// the token argument (form field, query or JSON body) and takes the same token in the
// Authorization header. slack-go, which puts most tokens in the form, works through
// httpclient.BearerToken; without it, it is refused.
func TestHardenedTokenOnlyInHeader(t *testing.T) {
	emu := MustStart(t, emulator.Config{Hardened: true})
	cfg := emu.Config()
	form := url.Values{"token": {cfg.BotToken}, "channel": {"C0GENERAL"}, "text": {"token in the form"}}

	inForm, _ := http.NewRequest(http.MethodPost, emu.URL()+"chat.postMessage", strings.NewReader(form.Encode()))
	inForm.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	inQuery, _ := http.NewRequest(http.MethodPost, emu.URL()+"chat.postMessage?"+form.Encode(), nil)
	inJSON, _ := http.NewRequest(http.MethodPost, emu.URL()+"chat.postMessage",
		strings.NewReader(`{"token":"`+cfg.BotToken+`","channel":"C0GENERAL","text":"token in JSON"}`))
	inJSON.Header.Set("Content-Type", "application/json")
	for name, req := range map[string]*http.Request{"form": inForm, "query": inQuery, "JSON": inJSON} {
		var body map[string]any
		status, raw := send(t, nil, req)
		if err := json.Unmarshal([]byte(raw), &body); err != nil || status != http.StatusOK || body["error"] != "not_authed" {
			t.Errorf("token in the %s: %d %s, want not_authed", name, status, raw)
		}
	}
	if msgs := emu.Thread("C0GENERAL", ""); len(msgs) != 0 {
		t.Fatalf("a token outside the header posted: %+v", msgs)
	}

	form.Del("token")
	if status, body := send(t, nil, apiRequest(emu, "chat.postMessage", form)); status != http.StatusOK || !strings.Contains(body, `"ok":true`) {
		t.Fatalf("the same token in the header: %d %s", status, body)
	}

	plain := slack.New(cfg.BotToken, slack.OptionAPIURL(emu.URL()))
	if _, err := plain.AuthTest(); slackError(t, err) != "not_authed" {
		t.Errorf("slack-go with its token in the form: %v, want not_authed", err)
	}
	api := slack.New(cfg.BotToken, slack.OptionAPIURL(emu.URL()), slack.OptionHTTPClient(httpclient.NewSlack()))
	if _, err := api.AuthTest(); err != nil {
		t.Errorf("slack-go through httpclient.NewSlack: %v", err)
	}
	if _, _, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("through slack-go", false)); err != nil {
		t.Errorf("chat.postMessage through httpclient.NewSlack: %v", err)
	}
}

// TestHardenedNoGetForWrites: a hardened emulator answers GET only for methods that
// change nothing, and no other HTTP method than GET and POST.
func TestHardenedNoGetForWrites(t *testing.T) {
	emu := MustStart(t, emulator.Config{Hardened: true})
	get := func(method string, query url.Values) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, emu.URL()+method+"?"+query.Encode(), nil)
		req.Header.Set("Authorization", "Bearer "+emu.Config().BotToken)
		return send(t, nil, req)
	}
	for _, method := range []string{"chat.postMessage", "reactions.add", "conversations.open", "views.open", "apps.connections.open"} {
		if status, body := get(method, url.Values{"channel": {"C0GENERAL"}, "text": {"by GET"}, "users": {"U0ALICE"}}); status != http.StatusMethodNotAllowed {
			t.Errorf("GET %s: %d %s, want 405", method, status, body)
		}
	}
	if msgs := emu.Thread("C0GENERAL", ""); len(msgs) != 0 {
		t.Fatalf("a GET posted: %+v", msgs)
	}
	for _, method := range []string{"auth.test", "conversations.history", "users.info"} {
		if status, body := get(method, url.Values{"channel": {"C0GENERAL"}, "user": {"U0ALICE"}}); status != http.StatusOK || !strings.Contains(body, `"ok":true`) {
			t.Errorf("GET %s: %d %s", method, status, body)
		}
	}
	req := apiRequest(emu, "auth.test", nil)
	req.Method = http.MethodPut
	if status, _ := send(t, nil, req); status != http.StatusMethodNotAllowed {
		t.Errorf("PUT auth.test: %d, want 405", status)
	}

	// Not hardened (a test double), GET works for every method, as Slack's does.
	double := MustStart(t, emulator.Config{})
	req, _ = http.NewRequest(http.MethodGet, double.URL()+"chat.postMessage?"+url.Values{"channel": {"C0GENERAL"}, "text": {"by GET"}}.Encode(), nil)
	req.Header.Set("Authorization", "Bearer "+double.Config().BotToken)
	if status, body := send(t, nil, req); status != http.StatusOK || !strings.Contains(body, `"ok":true`) {
		t.Errorf("GET chat.postMessage, not hardened: %d %s", status, body)
	}
}

// TestHardenedRandomTokens: each hardened emulator has its own random tokens; given
// tokens are kept, and an emulator that is not hardened keeps the fixed ones tests use.
func TestHardenedRandomTokens(t *testing.T) {
	a, b := MustStart(t, emulator.Config{Hardened: true}).Config(), MustStart(t, emulator.Config{Hardened: true}).Config()
	d := emulator.DefaultConfig()
	for _, c := range []emulator.Config{a, b} {
		if !strings.HasPrefix(c.BotToken, "xoxb-") || !strings.HasPrefix(c.AppToken, "xapp-") || len(c.BotToken) < 45 ||
			c.BotToken == d.BotToken || c.AppToken == d.AppToken || c.VerificationToken == d.VerificationToken {
			t.Errorf("hardened tokens %q %q %q", c.BotToken, c.AppToken, c.VerificationToken)
		}
	}
	if a.BotToken == b.BotToken || a.AppToken == b.AppToken || a.VerificationToken == b.VerificationToken {
		t.Errorf("two runs share tokens: %q %q", a.BotToken, b.BotToken)
	}
	given := MustStart(t, emulator.Config{Hardened: true, BotToken: "xoxb-given", AppToken: "xapp-given"}).Config()
	if given.BotToken != "xoxb-given" || given.AppToken != "xapp-given" {
		t.Errorf("given tokens replaced: %q %q", given.BotToken, given.AppToken)
	}
	if c := MustStart(t, emulator.Config{}).Config(); c.BotToken != "xoxb-emulator" || c.AppToken != "xapp-emulator" {
		t.Errorf("test double tokens %q %q", c.BotToken, c.AppToken)
	}
}

// TestHardenedPlaygroundSession: a hardened playground's /ui/ endpoints need the
// session cookie the page sets (HttpOnly, SameSite=Strict); another run's cookie does
// not do, and the page refuses to be framed.
func TestHardenedPlaygroundSession(t *testing.T) {
	emu := MustStart(t, emulator.Config{Hardened: true})
	other := MustStart(t, emulator.Config{Hardened: true})
	state := func(client *http.Client, emu *emulator.Server) int {
		req, _ := http.NewRequest(http.MethodGet, emu.PageURL()+"ui/state?user=U0ALICE", nil)
		status, _ := send(t, client, req)
		return status
	}
	postUI := func(client *http.Client) int {
		req, _ := http.NewRequest(http.MethodPost, emu.PageURL()+"ui/post",
			strings.NewReader(`{"user":"U0ALICE","channel":"C0GENERAL","text":"hello"}`))
		req.Header.Set("Content-Type", "application/json")
		status, _ := send(t, client, req)
		return status
	}
	if got := state(nil, emu); got != http.StatusForbidden {
		t.Errorf("state without the cookie: %d, want 403", got)
	}
	if got := postUI(nil); got != http.StatusForbidden {
		t.Errorf("post without the cookie: %d, want 403", got)
	}

	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar}
	resp, err := browser.Get(emu.PageURL())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	cookies := resp.Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode || len(cookies[0].Value) < 40 {
		t.Fatalf("session cookie %+v", cookies)
	}
	if csp := resp.Header.Get("Content-Security-Policy"); csp != "frame-ancestors 'none'" || resp.Header.Get("X-Frame-Options") != "DENY" {
		t.Errorf("page framing headers: CSP %q, X-Frame-Options %q", csp, resp.Header.Get("X-Frame-Options"))
	}
	if got := state(browser, emu); got != http.StatusOK {
		t.Errorf("state with the cookie: %d", got)
	}
	if got := postUI(browser); got != http.StatusOK {
		t.Errorf("post with the cookie: %d", got)
	}

	// This run's session value does not open another run's playground, even under
	// that run's cookie name.
	req, _ := http.NewRequest(http.MethodGet, other.PageURL()+"ui/state?user=U0ALICE", nil)
	req.AddCookie(&http.Cookie{Name: "threadwright_playground_" + port(other), Value: cookies[0].Value})
	if status, _ := send(t, nil, req); status != http.StatusForbidden {
		t.Errorf("another run's session value: %d, want 403", status)
	}
}
