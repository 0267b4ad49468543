package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// starterMemoYAML is a workflow of two written artifacts that only its starter may
// approve.
const starterMemoYAML = `
name: memo
title: Memo
permissions:
  approve: starter
artifacts:
  - id: draft
    title: Draft
  - id: polish
    title: Polished memo
    depends_on: [draft]
`

// revisions counts the editor's requests for the artifact titled title.
func (h *wfHarness) revisions(title string) int {
	n := 0
	for _, r := range h.ai.Requests() {
		if strings.Contains(r.LastUserMessage(), `Revise "`+title+`"`) {
			n++
		}
	}
	return n
}

// TestE2ETypedDecisions: typed replies to a written artifact (docs/workflows.md, "Typed
// decisions"): a bystander's "looks good" under approve: starter is refused and told
// who may; the starter's "looks good" approves with no model call; an ambiguous reply
// is asked about with buttons, and Request this change applies it; "подтверждаю"
// approves.
func TestE2ETypedDecisions(t *testing.T) {
	h := newWorkflowHarness(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memo.yaml"), []byte(starterMemoYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env["WORKFLOWS_DIR"] = dir
	h.start()
	thread := h.startWorkflow(alice, "memo")
	h.latest(thread, "Approve", "")

	h.post(general, bob, "looks good", thread)
	h.idle()
	h.idle()
	if eph := h.ephemerals(bob); !strings.Contains(eph, "only the person who started it (<@"+alice+">) may approve") {
		t.Fatalf("bob was not told who may approve: %q", eph)
	}
	if tr := h.transcript(thread); strings.Contains(tr, "Approved by") {
		t.Fatalf("a bystander's typed approval was recorded:\n%s", tr)
	}

	calls := len(h.ai.Requests())
	h.post(general, alice, "Looks good!", thread)
	h.waitFor("the draft approved", func() bool { return strings.Contains(h.transcript(thread), "Approved by <@"+alice+">") })
	h.latest(thread, "Approve", "Polished memo")
	for _, r := range h.ai.Requests()[calls:] {
		if len(r.Chat.Tools) == 1 && (r.Chat.Tools[0].Function.Name == "classify_review_reply" || strings.Contains(r.LastUserMessage(), `Revise "Draft"`)) {
			t.Fatalf("a typed approval called the model: %s", r.Chat.Tools[0].Function.Name)
		}
	}
	if n := h.revisions("Draft"); n != 0 {
		t.Fatalf("the editor revised the draft %d times", n)
	}

	h.post(general, alice, "hmm, the ending", thread)
	h.idle()
	h.idle()
	meaning := h.latest(thread, "Request this change", "")
	if h.revisions("Polished memo") != 0 {
		t.Fatal("an ambiguous reply was applied before the person said what it meant")
	}
	h.click(thread, alice, "Request this change", "")
	h.waitFor("the change applied", func() bool { return strings.Contains(h.transcript(thread), "It follows: hmm, the ending") })
	h.idle()
	if h.find(meaning, "Request this change", "") != nil || h.find(meaning, "Approve", "") != nil {
		t.Errorf("the card that asked what the reply meant keeps its buttons once answered")
	}

	h.post(general, alice, "подтверждаю", thread)
	h.waitFor("the polished memo approved", func() bool {
		return strings.Count(h.transcript(thread), "Approved by <@"+alice+">") == 2
	})
	if n := h.revisions("Polished memo"); n != 1 {
		t.Fatalf("the editor revised the polished memo %d times; want 1 (the change asked for)", n)
	}
	assertNoSlackErrors(t, h.harness)
}
