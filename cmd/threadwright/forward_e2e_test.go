package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2EStatusAndListAnswerWhereTyped checks that /threadwright status and list typed
// in a channel answer there, to the user only, with a link to the workflow's thread,
// and post nothing in the thread.
func TestE2EStatusAndListAnswerWhereTyped(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	thread := h.startBrief()
	h.latest(thread, "A: Direction A", "")
	before := len(h.emu.Thread(general, thread))
	link := "/archives/" + general + "/p" + strings.ReplaceAll(thread, ".", "")

	t.Run("Status", func(t *testing.T) {
		h.slash(alice, "status")
		got := h.waitEphemeral(general, alice, ": status")
		if !strings.Contains(got, "Open the thread") || !strings.Contains(got, link) {
			t.Fatalf("status has no link to the thread %s:\n%s", link, got)
		}
		for _, m := range h.emu.Ephemerals(general, alice) {
			if strings.Contains(m.Text+string(m.Blocks), ": status") && m.ThreadTS != "" {
				t.Fatalf("status shown in thread %s, want the channel", m.ThreadTS)
			}
		}
		if n := len(h.emu.Thread(general, thread)); n != before {
			t.Fatalf("the thread has %d messages after status, want %d:\n%s", n, before, h.transcript(thread))
		}
	})
	t.Run("List", func(t *testing.T) {
		h.slash(alice, "list")
		got := h.waitEphemeral(general, alice, "Your workflows running here:")
		if !strings.Contains(got, "|*Product brief*>") || !strings.Contains(got, link) {
			t.Fatalf("list does not link the running workflow's thread %s:\n%s", link, got)
		}
		if n := len(h.emu.Thread(general, thread)); n != before {
			t.Fatalf("the thread has %d messages after list, want %d", n, before)
		}
	})
}

// TestE2EStatusListsEveryRun checks that status typed in a channel where the person
// runs three workflows lists all three at once: each titled, with its subject, the
// step it is at and who that step waits for, and linked to its thread; and that a
// command with several runs to choose from labels its buttons by title and subject.
func TestE2EStatusListsEveryRun(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	topics := []string{"meal kits for students", "a bike-sharing app", "office plants"}
	threads := make([]string, len(topics))
	for i, topic := range topics {
		threads[i] = h.startWorkflow(alice, "product-brief "+topic)
		h.latest(threads[i], "A: Direction A", "")
	}
	h.click(threads[1], alice, "A: Direction A", "")
	h.latest(threads[1], "Approve", "")

	h.slash(alice, "status")
	got := h.waitEphemeral(general, alice, "You have 3 workflows running in this channel:")
	for i, topic := range topics {
		link := "/archives/" + general + "/p" + strings.ReplaceAll(threads[i], ".", "")
		step := "*Problem*: options are ready: anyone in the thread can pick one"
		if i == 1 {
			step = "*Problem*: awaiting review: anyone in the thread can approve it"
		}
		line := "|*Product brief*> — " + topic + " · " + step
		if !strings.Contains(got, link) || !strings.Contains(got, line) {
			t.Errorf("status lacks run %d, linked to %s, as %q:\n%s", i+1, link, line, got)
		}
	}
	if strings.Contains(got, threads[0]) {
		t.Errorf("status shows a raw thread timestamp:\n%s", got)
	}

	h.slash(alice, "export")
	got = h.waitEphemeral(general, alice, "Which one is `export` for?")
	for _, topic := range topics {
		if !strings.Contains(got, "Product brief — "+topic) {
			t.Errorf("the menu has no button for %q:\n%s", topic, got)
		}
	}
}

// TestE2EOneHeaderPerStart checks that a workflow started from a channel has one
// header: the thread's first message, which says who started it, and no second
// "started by" card in the thread.
func TestE2EOneHeaderPerStart(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	thread := h.startBrief()
	h.latest(thread, "A: Direction A", "")
	headers, started := 0, 0
	for _, m := range h.emu.Thread(general, thread) {
		if strings.Contains(string(m.Blocks), `"type":"header"`) {
			headers++
		}
		if strings.Contains(m.Text, "started by <@"+alice+">") {
			started++
		}
	}
	if headers != 1 || started != 1 {
		t.Fatalf("%d headers and %d started-by messages, want 1 and 1:\n%s", headers, started, h.transcript(thread))
	}
	root := h.emu.Thread(general, thread)[0]
	if root.TS != thread || !strings.Contains(root.Text, "started by <@"+alice+">") {
		t.Fatalf("the thread's first message is not the run's header: %q", root.Text)
	}
}

// TestE2EHelpDescribesEveryCommand checks that /threadwright help lists every command
// with a description and an example, and that the manifest's usage hint names them all.
func TestE2EHelpDescribesEveryCommand(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	h.slash(alice, "help")
	got := h.waitEphemeral(general, alice, "this list")
	for _, want := range []string{
		"`start <workflow> [text]` — start a workflow", "E.g. `/threadwright start blog ",
		"`list` — ", "`status` — ", "`restart <artifact>` — ", "E.g. `/threadwright restart audience`",
		"`edit <artifact> <instructions>` — ", "E.g. `/threadwright edit name make it shorter`",
		"`export` — ", "`cancel` — ", "`help` — ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("help lacks %q:\n%s", want, got)
		}
	}
	hint := conversation.CommandUsageHint
	for _, cmd := range []string{"start <workflow>", "list", "status", "restart <artifact>", "edit <artifact> <instructions>", "export", "cancel", "help"} {
		if !strings.Contains(hint, cmd) {
			t.Errorf("usage hint %q lacks %q", hint, cmd)
		}
	}
	m, err := bot.NewManifest("threadwright").YAML()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m), "usage_hint: "+hint) {
		t.Errorf("the manifest's usage hint is not %q:\n%s", hint, m)
	}
}

// TestE2EModalsAreTitledWithTheAction checks that the Request changes and Edit
// modals are titled with what they do (an artifact named "Problem" as the title read
// as an error), their field naming the artifact.
func TestE2EModalsAreTitledWithTheAction(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	thread := h.startBrief()
	h.click(thread, alice, "A: Direction A", "")
	opened := 0
	for _, tc := range []struct{ label, title, field string }{
		{"Request changes", "Request changes", "What should change in “Problem”?"},
		{"Edit this artifact", "Edit", "How should “Problem” change?"},
	} {
		label := tc.label
		t.Run(strings.ReplaceAll(label, " ", ""), func(t *testing.T) {
			ts := h.latest(thread, label, "")
			b := h.find(ts, label, "")
			var err error
			if b.Type == "button" {
				_, err = h.emu.ClickButton(general, ts, alice, b.ActionID)
			} else {
				_, err = h.emu.ChooseMenuItem(general, ts, alice, label)
			}
			if err != nil {
				t.Fatal(err)
			}
			var v emulator.View
			h.waitFor("the "+label+" modal", func() bool {
				views := h.emu.Views()
				if len(views) > opened {
					v = views[len(views)-1]
				}
				return len(views) > opened
			})
			opened++
			var view struct {
				Title struct{ Text string } `json:"title"`
			}
			if err := json.Unmarshal(v.View, &view); err != nil {
				t.Fatal(err)
			}
			if view.Title.Text != tc.title || !strings.Contains(string(v.View), tc.field) {
				t.Fatalf("the %s modal is titled %q, want %q with the field %q:\n%s", label, view.Title.Text, tc.title, tc.field, v.View)
			}
		})
	}
}

// TestE2ERetryAfterAModelFailure checks that a workflow step the model failed offers
// Retry, and that Retry runs that step again, once: the artifact appears.
func TestE2ERetryAfterAModelFailure(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["MODEL_MAX_RETRIES"] = "0"
	writes := &outage{down: true} // the artifact's writes
	h.ai.Handle(writes.handler(onlyTool("commit_artifact_final_text"), openaitest.Response{Status: http.StatusServiceUnavailable}, h.model.respond))
	h.start()
	thread := h.startBrief()
	h.click(thread, alice, "A: Direction A", "")
	failed := h.latest(thread, "Retry", "")
	if tr := h.transcript(thread); strings.Contains(tr, "Problem: the text the model wrote") || !strings.Contains(tr, "The model did not answer (HTTP 503). Retry runs this step again.") {
		t.Fatalf("the failed step left its artifact, or its message does not say the model failed:\n%s", tr)
	}
	retry := *h.find(failed, "Retry", "")
	before := writes.set(false)
	h.click(thread, alice, "Retry", "")
	h.latest(thread, "Approve", "")
	after := writes.count()
	if after != before+1 {
		t.Fatalf("Retry wrote the artifact %d times, want once", after-before)
	}
	if n := strings.Count(h.transcript(thread), "Problem: the text the model wrote"); n != 1 {
		t.Fatalf("the artifact shown %d times, want once:\n%s", n, h.transcript(thread))
	}
	// The Retry of a step that has run again is out of date: nothing runs.
	if h.find(failed, "Retry", "") != nil {
		t.Error("the failure message keeps its Retry after it was clicked")
	}
	env, err := h.emu.ClickOld(general, failed, alice, retry)
	if err != nil {
		t.Fatal(err)
	}
	h.settleEnvelope(env)
	h.waitEphemeral(general, alice, "That Retry is no longer available")
	again := writes.count()
	if again != after {
		t.Fatalf("a second click on Retry wrote the artifact again (%d writes, want %d)", again, after)
	}
}

// TestE2ERetryNextStepAfterApproval: an approval holds, but the next artifact's
// options fail (the model is down); the failure says the model failed and offers
// Retry, which proposes those options once the model is back.
func TestE2ERetryNextStepAfterApproval(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["MODEL_MAX_RETRIES"] = "0"
	proposals := &outage{}
	h.ai.Handle(proposals.handler(onlyTool("commit_artifact_options"), openaitest.Response{Status: http.StatusServiceUnavailable}, h.model.respond))
	h.start()
	thread := h.startBrief()
	h.click(thread, alice, "A: Direction A", "")
	h.latest(thread, "Approve", "")
	proposals.set(true)
	h.click(thread, alice, "Approve", "")
	failed := h.latest(thread, "Retry", "")
	if tr := h.transcript(thread); !strings.Contains(tr, "The model did not answer (HTTP 503). Retry runs this step again.") {
		t.Fatalf("the failure after the approval does not name the model or offer Retry:\n%s", tr)
	}
	before := proposals.set(false)
	h.click(thread, alice, "Retry", "")
	h.waitFor("the next artifact's options", func() bool {
		return strings.Count(h.transcript(thread), "Direction A") >= 2 && h.optionsMessages(thread) == 1
	})
	if n := proposals.count(); n != before+1 {
		t.Errorf("Retry proposed %d times, want once", n-before)
	}
	if h.find(failed, "Retry", "") != nil {
		t.Error("the failure message keeps its Retry after it was clicked")
	}
}

// TestE2ERetryTypedChangeRequest: a change request typed under an artifact fails
// because the model is down; the failure offers Retry, which applies that change
// once the model is back.
func TestE2ERetryTypedChangeRequest(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["MODEL_MAX_RETRIES"] = "0"
	writes := &outage{}
	h.ai.Handle(writes.handler(onlyTool("commit_artifact_final_text"), openaitest.Response{Status: http.StatusServiceUnavailable}, h.model.respond))
	h.start()
	thread := h.startBrief()
	h.click(thread, alice, "A: Direction A", "")
	h.latest(thread, "Approve", "")
	writes.set(true)
	h.post(general, alice, "make it about nurses", thread)
	failed := h.latest(thread, "Retry", "")
	if tr := h.transcript(thread); !strings.Contains(tr, "The model did not answer (HTTP 503). Retry runs this step again.") {
		t.Fatalf("the typed change's failure does not offer Retry:\n%s", tr)
	}
	writes.set(false)
	h.click(thread, alice, "Retry", "")
	h.waitFor("the change applied", func() bool { return strings.Contains(h.transcript(thread), "It follows: make it about nurses") })
	if h.find(failed, "Retry", "") != nil {
		t.Error("the failure message keeps its Retry after it was clicked")
	}
}
