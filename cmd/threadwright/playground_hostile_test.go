package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// hostilePage is a page of another site, open in the browser where the developer
// uses the playground (TARGET is the playground's URL). It tries what any page can:
// a form that posts as the bot with the token the playground used to have, a post
// in a person's name, and reading the workspace. It sets window.results when done.
const hostilePage = `<!doctype html><title>hostile</title>
<iframe name="sink"></iframe>
<form id="form" method="POST" action="TARGETapi/chat.postMessage" target="sink">
<input name="token" value="xoxb-emulator"><input name="channel" value="C0GENERAL"><input name="text" value="pwned by a form">
</form>
<script>
(async () => {
  const r = {};
  const sunk = new Promise(resolve => document.querySelector("iframe").onload = resolve);
  document.getElementById("form").submit();
  await sunk;
  try {
    await fetch("TARGETui/post", {method: "POST", mode: "no-cors", credentials: "include",
      body: JSON.stringify({user: "U0ALICE", channel: "C0GENERAL", text: "@threadwright pwned by fetch"})});
    r.post = "sent";
  } catch (e) { r.post = "blocked"; }
  try {
    const res = await fetch("TARGETui/state?user=U0ALICE", {credentials: "include"});
    r.read = "read " + res.status;
  } catch (e) { r.read = "blocked"; }
  window.results = JSON.stringify(r);
})();
</script>`

// TestPlaygroundRefusesHostilePages: with the playground open in the browser, a page
// of another origin cannot post as the bot, post as a person or read the workspace,
// and a DNS name rebound to 127.0.0.1 (Chromium's host resolver rules stand in for
// the attacker's DNS server) gets 421 for the page and its state.
func TestPlaygroundRefusesHostilePages(t *testing.T) {
	chromium := chromiumPath(t)
	url, _ := startDev(t, nil)
	port := url[strings.LastIndex(url, ":")+1 : len(url)-1]
	p := newPage(t, chromium, "playground-hostile", chromedp.Flag("host-resolver-rules", "MAP rebind.test 127.0.0.1"))

	// The developer has the playground open: the browser holds its session cookie.
	p.run(chromedp.Navigate(url+"?user=U0ALICE"), chromedp.WaitVisible(`[data-channel="C0GENERAL"]`))

	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, strings.ReplaceAll(hostilePage, "TARGET", url))
	}))
	defer hostile.Close()
	p.run(chromedp.Navigate(hostile.URL))
	results := p.until("the hostile page's attempts", `window.results || ""`)
	if strings.Contains(results, `"read":"read`) {
		t.Errorf("the hostile page read the workspace: %s", results)
	}

	// Nothing was posted: the page's state, read as the developer's browser does.
	client := sessionClient(t)
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	resp, err = client.Get(url + "ui/state?user=U0ALICE&channel=C0GENERAL")
	if err != nil {
		t.Fatal(err)
	}
	state, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.Contains(string(state), "pwned") {
		t.Fatalf("after the hostile page (%s), #general: %d %s", results, resp.StatusCode, state)
	}

	// DNS rebinding: the same server under another name answers 421.
	for _, path := range []string{"", "ui/state?user=U0ALICE"} {
		res, err := chromedp.RunResponse(p.ctx, chromedp.Navigate("http://rebind.test:"+port+"/"+path))
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != http.StatusMisdirectedRequest {
			t.Errorf("http://rebind.test:%s/%s: status %d, want 421", port, path, res.Status)
		}
	}
	// localhost is the same machine: the page loads.
	res, err := chromedp.RunResponse(p.ctx, chromedp.Navigate("http://localhost:"+port+"/"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusOK {
		t.Errorf("http://localhost:%s/: status %d", port, res.Status)
	}
}
