package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPlaygroundBlogFollowsTheTopic: in the browser, `/threadwright start blog` with a
// topic starts the blog on the demo model, and the outline options (reviewed against
// the criteria and revised once) and the outline written from the one chosen are
// about that topic, not the demo's canned subject.
func TestPlaygroundBlogFollowsTheTopic(t *testing.T) {
	chromium := chromiumPath(t)
	url, _ := startDev(t, nil)
	p := newPage(t, chromium, "playground-topic")
	p.run(chromedp.Navigate(url+"?user=U0ALICE"), chromedp.WaitVisible("#demo-banner"))
	p.run(chromedp.Click(`[data-channel="C0GENERAL"]`))

	const topic = "Go generics for data engineers"
	before := p.count(channelBotMessages)
	p.send("#composer", "/threadwright start blog "+topic)
	blog := p.newThread("the blog", before)
	p.run(chromedp.Click(fmt.Sprintf(`#channel [data-thread-open=%q]`, blog)))
	options := p.until("the outline's options", `(() => { const m = [...document.querySelectorAll("#thread .message.bot")].find(m => m.textContent.includes("Options for")); return m ? m.textContent : ""; })()`)
	if !strings.Contains(options, topic) || strings.Contains(strings.ToLower(options), "stand-up") {
		t.Errorf("the outline's options are not about %q:\n%s", topic, options)
	}
	// The options shown are the self-reviewed ones (blog.yaml's self_review), still
	// about the topic.
	if !strings.Contains(options, "Reviewed against the criteria and revised once") || !strings.Contains(options, "builds towards the angle") {
		t.Errorf("the outline's options are not the reviewed ones:\n%s", options)
	}
	p.clickButton("#thread", "A")
	outline := p.until("the outline for review", `(() => { const m = [...document.querySelectorAll("#thread .message.bot")].filter(m => m.querySelector("button.block-button") && m.textContent.includes("Approve")).pop(); return m ? m.textContent : ""; })()`)
	p.screenshot("outline")
	if !strings.Contains(outline, topic+": A Step-by-Step Playbook") || !strings.Contains(outline, "Getting started with "+topic) {
		t.Errorf("the outline shown is not about %q:\n%s", topic, outline)
	}
	if strings.Contains(strings.ToLower(outline), "stand-up") {
		t.Errorf("the outline shown is about the demo's canned subject:\n%s", outline)
	}
}
