package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/playground/emulator"
)

// blogTopicLabel is the label of the blog's required input.
const blogTopicLabel = "What is the article about?"

// sizedYAML is a workflow with a required number input, for the modal's validation.
const sizedYAML = `
name: sized
title: Sized note
inputs:
  - id: topic
    label: What is it about?
    required: true
  - id: words
    label: How many words?
    type: number
    required: true
artifacts:
  - id: plan
    title: Outline
    mode: choice
    options: 2
`

// waitView waits for a modal open for user and returns it.
func (h *wfHarness) waitView(user string) emulator.View {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	v, err := h.emu.WaitForView(ctx, user)
	if err != nil {
		h.t.Fatal(err)
	}
	return v
}

// submitInputs fills the open modal of user by label, submits it and waits for the
// bot's ack and turn.
func (h *wfHarness) submitInputs(user string, values map[string]string) {
	h.t.Helper()
	env, err := h.emu.SubmitInputs(user, values)
	if err != nil {
		h.t.Fatal(err)
	}
	h.settleEnvelope(env)
}

// inputBlocks returns the labels of a view's input blocks, and which are optional.
func inputBlocks(t *testing.T, v emulator.View) map[string]bool {
	t.Helper()
	var view struct {
		Blocks []struct {
			Type     string `json:"type"`
			Optional bool   `json:"optional"`
			Label    struct {
				Text string `json:"text"`
			} `json:"label"`
		} `json:"blocks"`
	}
	if err := json.Unmarshal(v.View, &view); err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, b := range view.Blocks {
		if b.Type == "input" {
			out[b.Label.Text] = b.Optional
		}
	}
	return out
}

// headers counts the header blocks titled title in the thread (its first message
// included).
func (h *wfHarness) headers(thread, title string) int {
	n := 0
	for _, m := range h.emu.Thread(general, thread) {
		var blocks []struct {
			Type string `json:"type"`
			Text struct {
				Text string `json:"text"`
			} `json:"text"`
		}
		_ = json.Unmarshal(m.Blocks, &blocks)
		for _, b := range blocks {
			if b.Type == "header" && b.Text.Text == title {
				n++
			}
		}
	}
	return n
}

// TestE2EMissingInputModal starts the blog without a topic by the slash command,
// whose trigger opens the modal at once, and by a mention, whose message in the
// thread has a button that opens it; each submission fills the topic and the first
// options request is about it. Each start posts one header.
func TestE2EMissingInputModal(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()

	// The slash command: the modal opens on its trigger_id.
	thread := h.startWorkflow(alice, "blog")
	v := h.waitView(alice)
	if inputs := inputBlocks(t, v); len(inputs) != 1 || inputs[blogTopicLabel] {
		t.Fatalf("the modal's inputs (label → optional) are %v; want the required topic only", inputs)
	}
	h.waitFor("the message asking for the topic", func() bool {
		return strings.Contains(h.transcript(thread), "Before I start, tell me: *"+blogTopicLabel+"*")
	})
	if n := len(h.optionsRequests()); n != 0 {
		t.Fatalf("%d options requests before the topic was given", n)
	}
	h.submitInputs(alice, map[string]string{blogTopicLabel: "Kubernetes cost control"})
	h.firstOptionsAbout(0, "Kubernetes cost control")
	h.latest(thread, "A: Direction A", "")
	tr := h.transcript(thread)
	if !strings.Contains(tr, "Details given by <@"+alice+">") {
		t.Errorf("the message asking for the topic was not closed:\n%s", tr)
	}
	if n := h.headers(thread, "Blog article"); n != 1 {
		t.Errorf("the slash command's start posted %d headers:\n%s", n, tr)
	}

	// A mention has no trigger: its thread's message has the button.
	root := h.post(general, alice, "<@U0BOT> start blog", "")
	h.idle()
	h.click(root, alice, "Fill in the details", "")
	if inputs := inputBlocks(t, h.waitView(alice)); len(inputs) != 1 || inputs[blogTopicLabel] {
		t.Fatalf("the modal's inputs are %v", inputs)
	}
	h.submitInputs(alice, map[string]string{blogTopicLabel: "Rust lifetimes"})
	h.firstOptionsAbout(1, "Rust lifetimes")
	h.latest(root, "A: Direction A", "")
	if n := h.headers(root, "Blog article"); n != 1 {
		t.Errorf("the mention's start posted %d headers:\n%s", n, h.transcript(root))
	}
	// The button of a message whose inputs were given no longer opens anything.
	if b := h.find(h.latest(root, "A: Direction A", ""), "Fill in the details", ""); b != nil {
		t.Error("the options message has a Fill in the details button")
	}
	assertNoSlackErrors(t, h.harness)
}

// TestE2EMissingInputModalErrors checks the modal's validation: a number input that
// holds no number, and a required input of only spaces, get an error under their
// block and the modal stays open; nothing starts until the values are right.
func TestE2EMissingInputModalErrors(t *testing.T) {
	h := newWorkflowHarness(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "sized.yaml"), []byte(sizedYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env["WORKFLOWS_DIR"] = dir
	h.start()
	root := h.post(general, alice, "<@U0BOT> start sized", "")
	h.idle()
	h.click(root, alice, "Fill in the details", "")
	v := h.waitView(alice)
	if inputs := inputBlocks(t, v); len(inputs) != 2 || inputs["What is it about?"] || inputs["How many words?"] {
		t.Fatalf("the modal's inputs are %v; want both required", inputs)
	}

	// The client refuses an empty required input, as Slack's does.
	if _, err := h.emu.SubmitInputs(alice, map[string]string{"What is it about?": "Go"}); !errors.Is(err, emulator.ErrRequiredInput) {
		t.Fatalf("a submission without the words: %v", err)
	}

	h.submitInputs(alice, map[string]string{"What is it about?": "   ", "How many words?": "many"})
	v = h.waitView(alice)
	var topicErr, wordsErr string
	for id, msg := range v.Errors {
		switch {
		case strings.HasSuffix(id, ".topic"):
			topicErr = msg
		case strings.HasSuffix(id, ".words"):
			wordsErr = msg
		}
	}
	if topicErr != "Please fill this in." || wordsErr != "Enter a number, like 1500." || len(v.Errors) != 2 {
		t.Fatalf("the modal's errors are %v", v.Errors)
	}
	if n := len(h.optionsRequests()); n != 0 {
		t.Fatalf("%d options requests after an invalid submission", n)
	}

	h.submitInputs(alice, map[string]string{"What is it about?": "Go generics", "How many words?": "1200"})
	h.firstOptionsAbout(0, "Go generics")
	if sys := h.optionsRequests()[0].SystemPrompt(); !strings.Contains(sys, "(`words`): 1200") {
		t.Errorf("the options request lacks the words:\n%s", sys)
	}
	if views := h.emu.Views(); views[len(views)-1].Open {
		t.Error("the modal stayed open after a valid submission")
	}
	assertNoSlackErrors(t, h.harness)
}

// TestE2EMissingInputModalFallback: when the slash command's modal cannot open
// (views.open fails), the thread's message still asks, and a reply there fills the
// topic.
func TestE2EMissingInputModalFallback(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	h.emu.FailNext("views.open", "expired_trigger_id")
	thread := h.startWorkflow(alice, "blog")
	h.waitFor("the message asking for the topic", func() bool {
		return strings.Contains(h.transcript(thread), "Before I start, tell me: *"+blogTopicLabel+"*")
	})
	h.waitFor("the failed views.open", func() bool {
		for _, c := range h.emu.Calls("views.open") {
			if c.Error == "expired_trigger_id" {
				return true
			}
		}
		return false
	})
	h.post(general, alice, "Kubernetes cost control", thread)
	h.idle()
	h.firstOptionsAbout(0, "Kubernetes cost control")
	if n := h.headers(thread, "Blog article"); n != 1 {
		t.Errorf("the start posted %d headers", n)
	}
}

// TestE2EOneHeaderEveryDoor starts the blog with a topic by each door (the slash
// command, a mention in the channel, a mention in a thread, a mention in a thread
// whose earlier message gives the topic) and without one in a thread (asked there):
// each thread has exactly one header.
func TestE2EOneHeaderEveryDoor(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	var threads []string
	threads = append(threads, h.startWorkflow(alice, "blog Go generics"))
	h.latest(threads[0], "A: Direction A", "")

	root := h.post(general, alice, "<@U0BOT> start blog about Rust lifetimes", "")
	h.idle()
	h.latest(root, "A: Direction A", "")
	threads = append(threads, root)

	other := h.post(general, alice, "Let's plan some posts", "")
	h.mention(other, alice, "start blog Postgres vacuum tuning")
	h.latest(other, "A: Direction A", "")
	threads = append(threads, other)

	asked := h.post(general, alice, "We need an article on schema migrations", "")
	h.mention(asked, alice, "start blog")
	h.click(asked, alice, "Keep this topic", "") // a topic from an earlier message is held
	h.latest(asked, "A: Direction A", "")
	threads = append(threads, asked)

	// Without a topic: the thread asks for it.
	empty := h.post(general, alice, "<@U0BOT> start blog", "")
	h.idle()
	h.latest(empty, "Fill in the details", "")
	threads = append(threads, empty)
	threads = append(threads, h.startWorkflow(alice, "blog"))
	h.latest(threads[len(threads)-1], "Fill in the details", "")

	for i, th := range threads {
		if n := h.headers(th, "Blog article"); n != 1 {
			t.Errorf("door %d: %d headers:\n%s", i, n, h.transcript(th))
		}
	}
	assertNoSlackErrors(t, h.harness)
}

// TestE2EJustAQuestion: the "Just a question" button of the card asking what a reply
// meant has the assistant answer the reply in the thread; the artifact stays as it
// is.
func TestE2EJustAQuestion(t *testing.T) {
	h := newWorkflowHarness(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memo.yaml"), []byte(starterMemoYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env["WORKFLOWS_DIR"] = dir
	h.start()
	thread := h.startWorkflow(alice, "memo")
	h.latest(thread, "Approve", "")

	h.post(general, alice, "hmm, why this tone?", thread)
	h.idle()
	h.idle()
	h.latest(thread, "Just a question", "")
	if strings.Contains(h.transcript(thread), "An assistant answer.") {
		t.Fatal("the assistant answered before the person said what the reply meant")
	}
	h.click(thread, alice, "Just a question", "")
	h.waitFor("the assistant's answer", func() bool { return strings.Contains(h.transcript(thread), "An assistant answer.") })
	asked := false
	for _, r := range h.ai.Requests() {
		if r.LastUserMessage() != "hmm, why this tone?" {
			continue
		}
		asked = true
		n := 0
		for _, m := range r.Chat.Messages {
			if m.Role == "user" && strings.Contains(m.Content, "hmm, why this tone?") {
				n++
			}
		}
		if n != 1 {
			t.Errorf("the assistant's request carries the question %d times", n)
		}
	}
	if !asked {
		for _, r := range h.ai.Requests() {
			t.Logf("request: %d tools, last user message %q", len(r.Chat.Tools), r.LastUserMessage())
		}
		t.Error("no assistant request carried the question")
	}
	if n := h.revisions("Draft"); n != 0 {
		t.Errorf("the editor revised the draft %d times", n)
	}
	h.latest(thread, "Approve", "")
	assertNoSlackErrors(t, h.harness)
}
