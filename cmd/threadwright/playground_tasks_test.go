package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestPlaygroundShowsTaskCards: in the playground, a tool run's answer shows its
// thinking step as a task card (the demo model's calculate call, complete) above the
// streamed answer, with Stop in the same message.
func TestPlaygroundShowsTaskCards(t *testing.T) {
	chromium := chromiumPath(t)
	url, _ := startDev(t, nil)
	p := newPage(t, chromium, "playground-tasks")

	p.run(chromedp.Navigate(url+"?user=U0ALICE"), chromedp.WaitVisible(`[data-channel="C0GENERAL"]`))
	p.run(chromedp.Click(`[data-channel="C0GENERAL"]`))
	p.send("#composer", "@threadwright what is 17*23?")
	thread := p.until("the reply link", `(() => { const l = [...document.querySelectorAll("#channel [data-thread-open]")].pop(); return l ? l.getAttribute("data-thread-open") : ""; })()`)
	p.run(chromedp.Click(fmt.Sprintf(`#channel [data-thread-open=%q]`, thread)))
	card := p.until("a complete task card", `(() => {
		const c = document.querySelector('#thread .message.bot .b-timeline .b-task[data-status="complete"] .b-task-title');
		return c ? c.textContent : "";
	})()`)
	if !strings.HasPrefix(card, "calculate") {
		t.Fatalf("task card %q, want the calculate call", card)
	}
	body := p.until("the answer under the task", `(() => {
		const m = [...document.querySelectorAll("#thread .message.bot")].find(m => m.querySelector(".b-task"));
		return m && !m.classList.contains("streaming") ? m.querySelector(".message-body").textContent : "";
	})()`)
	if !strings.Contains(body, "391") {
		t.Fatalf("message with the task %q, want the answer 391 in it", body)
	}
	if n := p.count(`#thread .message.bot .b-task`); n != 1 {
		t.Errorf("%d task cards, want 1", n)
	}
	if p.eval(`[...document.querySelectorAll("#thread .message.bot")].find(m => m.querySelector(".b-task")).querySelector("button.block-button").textContent.trim()`) != "Stop" {
		t.Error("no Stop button in the streamed message")
	}
	p.screenshot("task-card")
}

// TestPlaygroundShowsCitedKnowledgeAnswer: after `threadwright ingest --dev`, the
// playground's demo model answers a question from the knowledge base: the page shows
// the search as a task card and the answer ending with its numbered source.
func TestPlaygroundShowsCitedKnowledgeAnswer(t *testing.T) {
	chromium := chromiumPath(t)
	dataDir := ingestEnv(t, map[string]string{
		"handbook/leave.md": "# Leave\n\n## Parental leave\n\nEmployees get 16 weeks of paid parental leave.\n",
	})
	if out, err := ingestCmd(t, "--dev", "handbook"); err != nil {
		t.Fatalf("ingest --dev: %v\n%s", err, out)
	}
	url, _ := startDev(t, map[string]string{"DATA_DIR": dataDir})
	p := newPage(t, chromium, "playground-knowledge")

	p.run(chromedp.Navigate(url+"?user=U0ALICE"), chromedp.WaitVisible(`[data-channel="C0GENERAL"]`))
	p.run(chromedp.Click(`[data-channel="C0GENERAL"]`))
	p.send("#composer", "@threadwright how long is parental leave?")
	thread := p.until("the reply link", `(() => { const l = [...document.querySelectorAll("#channel [data-thread-open]")].pop(); return l ? l.getAttribute("data-thread-open") : ""; })()`)
	p.run(chromedp.Click(fmt.Sprintf(`#channel [data-thread-open=%q]`, thread)))
	card := p.until("the knowledge search's task card", `(() => {
		const c = document.querySelector('#thread .message.bot .b-task[data-status="complete"] .b-task-title');
		return c ? c.textContent : "";
	})()`)
	if !strings.HasPrefix(card, "search_knowledge") {
		t.Fatalf("task card %q, want the search_knowledge call", card)
	}
	body := p.until("the cited answer", `(() => {
		const m = [...document.querySelectorAll("#thread .message.bot")].find(m => m.querySelector(".b-task"));
		return m && !m.classList.contains("streaming") ? m.querySelector(".message-body").textContent : "";
	})()`)
	for _, want := range []string{"16 weeks of paid parental leave. [1]", "Sources", "[1] handbook/leave.md — Parental leave"} {
		if !strings.Contains(body, want) {
			t.Errorf("answer %q, want %q in it", body, want)
		}
	}
	p.screenshot("knowledge-answer")
}
