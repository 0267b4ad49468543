package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/threadwright/threadwright/conversation"
)

// TestPlaygroundFeedbackInBrowser: in the playground, an answer shows its feedback
// buttons; a click on "Bad answer" opens the reason form, and what is typed there is stored, as
// `threadwright feedback --json` then shows.
func TestPlaygroundFeedbackInBrowser(t *testing.T) {
	chromium := chromiumPath(t)
	dir := t.TempDir()
	url, _ := startDev(t, map[string]string{"DATA_DIR": dir})
	p := newPage(t, chromium, "feedback")

	p.run(chromedp.Navigate(url+"?user=U0ALICE"), chromedp.WaitVisible("#demo-banner"))
	p.run(chromedp.Click(`[data-channel="C0GENERAL"]`))
	p.send("#composer", "@threadwright what is 17*23?")
	thread := p.until("the reply link", `(() => { const l = [...document.querySelectorAll("#channel [data-thread-open]")].pop(); return l ? l.getAttribute("data-thread-open") : ""; })()`)
	p.run(chromedp.Click(`#channel [data-thread-open="` + thread + `"]`))
	p.until("the answer's feedback buttons", `document.querySelector("#thread .message.bot button.feedback-button") ? "yes" : ""`)
	p.screenshot("feedback-buttons")

	p.clickButton("#thread", "Bad answer")
	p.run(
		chromedp.WaitVisible("#modal textarea, #modal input"),
		chromedp.SetValue("#modal textarea, #modal input", "Show the working."),
	)
	p.screenshot("feedback-reason")
	p.run(chromedp.Click("#modal-submit"))

	t.Setenv("DATA_DIR", dir) // feedback --dev reads the playground's store in it
	(&harness{t: t}).waitFor("the reason to be stored", func() bool {
		var out bytes.Buffer
		if err := run(context.Background(), []string{"feedback", "--json", "--dev"}, &out, testWriter{t}); err != nil {
			t.Fatal(err)
		}
		var r struct {
			Negative []struct {
				Reason string `json:"reason"`
				Rating string `json:"rating"`
			} `json:"negative"`
		}
		return json.Unmarshal(out.Bytes(), &r) == nil && len(r.Negative) == 1 && r.Negative[0].Reason == "Show the working." &&
			r.Negative[0].Rating == string(conversation.RatingNegative)
	})
}
