package main

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/testkit/openaitest"
)

// optionsRequests returns the requests for options the model has received, without
// the self reviews of options already proposed (reviewSentence).
func (h *wfHarness) optionsRequests() []openaitest.Request {
	var out []openaitest.Request
	for _, r := range h.ai.Requests() {
		if names := r.ToolNames(); len(names) == 1 && names[0] == "commit_artifact_options" && !strings.Contains(r.LastUserMessage(), reviewSentence) {
			out = append(out, r)
		}
	}
	return out
}

// firstOptionsAbout waits for the (n+1)th options request and checks that it carries
// topic as the workflow's input.
func (h *wfHarness) firstOptionsAbout(n int, topic string) {
	h.t.Helper()
	h.waitFor("an options request", func() bool { return len(h.optionsRequests()) > n })
	sys := h.optionsRequests()[n].SystemPrompt()
	if !strings.Contains(sys, "## What the team asked for") || !strings.Contains(sys, "(`topic`): "+topic) {
		h.t.Errorf("the first options request lacks the topic %q:\n%s", topic, sys)
	}
}

// TestE2EStartWithTopic starts the blog with a topic through each door (the slash
// command, a mention in a channel, a mention in a thread, and a topic written in the
// thread before the mention) and checks that the first options request is about it
// and that the start card shows it.
func TestE2EStartWithTopic(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()

	// The slash command: the text fills the topic.
	thread := h.startWorkflow(alice, "blog Go generics for data engineers")
	h.firstOptionsAbout(0, "Go generics for data engineers")
	// The blog's outline prompt uses its inputs: the topic and the word count's default.
	if sys := h.optionsRequests()[0].SystemPrompt(); !strings.Contains(sys, "Plan an article about: Go generics for data engineers.") ||
		!strings.Contains(sys, "It will be about 1500 words long") || !strings.Contains(sys, "Target length (words) (`wordcount`): 1500") {
		t.Errorf("the outline's guidance does not use the blog's inputs:\n%s", sys)
	}
	h.latest(thread, "A: Direction A", "")
	if tr := h.transcript(thread); !strings.Contains(tr, "Go generics for data engineers") {
		t.Errorf("the start card does not show the topic:\n%s", tr)
	}

	// A mention in the channel is a command, not a question for the assistant.
	root := h.post(general, alice, "<@U0BOT> start blog about Rust lifetimes", "")
	h.idle()
	h.firstOptionsAbout(1, "Rust lifetimes")
	h.latest(root, "A: Direction A", "")

	// A mention in an existing thread.
	other := h.post(general, alice, "Let's plan some posts", "")
	h.mention(other, alice, "start blog Postgres vacuum tuning")
	h.firstOptionsAbout(2, "Postgres vacuum tuning")
	h.latest(other, "A: Direction A", "")

	// A subject stated in the thread before the start fills the topic
	// (workflow.StatedSubject), held on the start card until it is kept.
	asked := h.post(general, alice, "We need an article on zero-downtime schema migrations", "")
	h.mention(asked, alice, "start blog")
	h.click(asked, alice, "Keep this topic", "")
	h.firstOptionsAbout(3, "zero-downtime schema migrations")
	h.latest(asked, "A: Direction A", "")

	for _, r := range h.ai.Requests() {
		if len(r.Chat.Tools) == 0 {
			t.Errorf("the assistant answered a start command: %q", r.LastUserMessage())
		}
	}
	assertNoSlackErrors(t, h.harness)
}

// TestE2EMissingInputAskedInThread starts the blog without a topic: the bot asks for
// it in the thread and proposes nothing until a reply there gives it.
func TestE2EMissingInputAskedInThread(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	thread := h.startWorkflow(alice, "blog")
	h.waitFor("the question for the topic", func() bool {
		return strings.Contains(h.transcript(thread), "Before I start, tell me: *What is the article about?*")
	})
	if n := len(h.optionsRequests()); n != 0 {
		t.Fatalf("%d options requests before the topic was given", n)
	}
	h.post(general, alice, "Kubernetes cost control", thread)
	h.idle()
	h.firstOptionsAbout(0, "Kubernetes cost control")
	h.latest(thread, "A: Direction A", "")
	assertNoSlackErrors(t, h.harness)
}

// TestE2EStartWordsAreAQuestion checks that "start" followed by words that name no
// workflow stays a question for the assistant.
func TestE2EStartWordsAreAQuestion(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	ts := h.post(general, alice, "<@U0BOT> start writing a poem about autumn", "")
	h.idle()
	h.waitFor("the assistant's answer", func() bool { return strings.Contains(h.transcript(ts), "An assistant answer.") })
	if n := len(h.optionsRequests()); n != 0 {
		t.Errorf("%d options requests: the question started a workflow", n)
	}
}

// TestE2EChangeHeldTopic: a topic taken from an earlier message is held on the start
// card, and nothing is written, until it is kept or changed; someone who may not
// restart cannot change it; the starter changes it through the modal, and the first
// options are written for the new topic, never for the old one.
func TestE2EChangeHeldTopic(t *testing.T) {
	const bob = "U0BOB"
	h := newWorkflowHarness(t)
	h.start()

	thread := h.post(general, bob, "We need an article on zero-downtime schema migrations", "")
	h.mention(thread, alice, "start blog")
	h.latest(thread, "Change topic", "")
	if tr := h.transcript(thread); !strings.Contains(tr, "The topic comes from <@"+bob+">'s message above. Nothing is written yet") {
		t.Fatalf("the start card does not say where the topic came from:\n%s", tr)
	}
	if n := len(h.optionsRequests()); n != 0 {
		t.Fatalf("%d options requests before the topic was kept or changed", n)
	}

	// Bob stated the subject but did not start the run: changing it is the
	// starter's, as restarting is.
	h.submitModal(thread, bob, "Change topic", "", "Kubernetes for cats")
	h.waitEphemeral(general, bob, "may keep or change the topic")
	if n := len(h.optionsRequests()); n != 0 {
		t.Fatalf("bob's change ran: %d options requests", n)
	}

	h.submitModal(thread, alice, "Change topic", "", "Go generics for data engineers")
	h.firstOptionsAbout(0, "Go generics for data engineers")
	h.latest(thread, "A: Direction A", "")
	for _, r := range h.optionsRequests() {
		// The earlier message stays in the thread's history; the topic is the new one.
		if sys := r.SystemPrompt(); strings.Contains(sys, "(`topic`): zero-downtime") || strings.Contains(sys, "about: zero-downtime") || strings.Contains(sys, "Kubernetes") {
			t.Errorf("an options request is about another topic:\n%s", r.SystemPrompt())
		}
	}
	tr := h.transcript(thread)
	if !strings.Contains(tr, "<@"+alice+"> changed the topic.") || !strings.Contains(tr, "Go generics for data engineers") {
		t.Errorf("the start card does not show the change:\n%s", tr)
	}
	if h.find(h.emu.BotMessages(general, thread)[0].TS, "Change topic", "") != nil {
		t.Error("the start card still offers to change the topic")
	}
	assertNoSlackErrors(t, h.harness)
}

// TestE2ERestartKeepsHeldTopic: a restart of the first artifact while the start card
// holds its topic keeps the topic, as Keep would: the card loses its buttons and says
// who kept it, the options are about that topic, and a typed choice then picks one.
func TestE2ERestartKeepsHeldTopic(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()

	thread := h.post(general, "U0BOB", "We need an article on zero-downtime schema migrations", "")
	h.mention(thread, alice, "start blog")
	h.latest(thread, "Change topic", "")

	h.mention(thread, alice, "restart plan")
	h.firstOptionsAbout(0, "zero-downtime schema migrations")
	h.latest(thread, "A: Direction A", "")
	if tr := h.transcript(thread); !strings.Contains(tr, "<@"+alice+"> kept this topic.") {
		t.Errorf("the start card does not say the topic was kept:\n%s", tr)
	}
	if h.find(h.emu.BotMessages(general, thread)[0].TS, "Change topic", "") != nil {
		t.Error("the start card still offers to change the topic")
	}

	h.post(general, alice, "B, but shorter", thread)
	h.waitFor("the outline written from the typed choice", func() bool {
		return strings.Contains(h.transcript(thread), "the text the model wrote. It follows: shorter")
	})
	assertNoSlackErrors(t, h.harness)
}
