package main

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPlaygroundAssistantView drives the playground's assistant view in headless
// Chromium: the Assistant button beside #general opens a thread with the greeting and
// the suggested prompts; clicking one asks it, the answer comes in the thread and the
// question becomes the thread's title.
func TestPlaygroundAssistantView(t *testing.T) {
	chromium := chromiumPath(t)
	url, _ := startDev(t, nil)
	p := newPage(t, chromium, "playground-assistant")
	p.run(chromedp.Navigate(url+"?user=U0ALICE"), chromedp.WaitVisible("#demo-banner"))
	p.run(chromedp.Click(`[data-channel="C0GENERAL"]`), chromedp.Click("#assistant-open"))
	p.until("the greeting", `(() => { const m = [...document.querySelectorAll("#thread .message.bot")]; return m.length ? m[0].textContent : ""; })()`)
	p.until("the suggested prompts", `(() => document.querySelectorAll("#thread button.prompt").length >= 3 ? "yes" : "")()`)
	if n := p.count(`#thread button.prompt[data-prompt^="start "]`); n == 0 {
		t.Error("no suggested prompt starts a workflow")
	}
	if title := p.eval(`document.querySelector("#thread-title").textContent`); title != "New chat" {
		t.Errorf("title before the first question %q", title)
	}
	p.screenshot("assistant-prompts")
	p.run(chromedp.Click(`#thread button.prompt`))
	p.until("the answer", `(() => document.querySelectorAll("#thread .message.bot").length >= 2 ? "yes" : "")()`)
	title := p.until("the title", `(() => { const t = document.querySelector("#thread-title").textContent; return t !== "New chat" ? t : ""; })()`)
	if title != "What can you do?" && title != "What can you do, and which tools can you use here?" {
		t.Errorf("title %q", title)
	}
	p.screenshot("assistant-answer")
}
