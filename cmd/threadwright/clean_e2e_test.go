package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/store"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// storedWorkflow stops the bot and returns the workflow run of thread as its stored
// checkpoint keeps it (the embedded store of h.dataDir).
func storedWorkflow(h *harness, thread string) *workflow.State {
	h.t.Helper()
	cp := storedCheckpoint(h, thread, 0)
	if cp.Conversation.State.Workflow == nil {
		h.t.Fatal("the thread has no workflow run")
	}
	return cp.Conversation.State.Workflow
}

// storedCheckpoint stops the bot and returns thread's stored checkpoint, with recent
// of its messages (the embedded store of h.dataDir).
func storedCheckpoint(h *harness, thread string, recent int) *conversation.Checkpoint {
	h.t.Helper()
	h.stop()
	st, err := store.Open(context.Background(), store.Options{DataDir: h.dataDir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		h.t.Fatal(err)
	}
	defer st.Close()
	cp, err := st.Load(context.Background(), conversation.Key{TeamID: "T0TEAM", ChannelID: general, ThreadTS: thread}, recent)
	if err != nil {
		h.t.Fatal(err)
	}
	return cp
}

// blockTexts returns the texts of the blocks of kind ("section", "context") of the
// message ts in the thread.
func blockTexts(h *wfHarness, thread, ts, kind string) []string {
	var out []string
	for _, m := range h.emu.Thread(general, thread) {
		if m.TS != ts {
			continue
		}
		var blocks []struct {
			Type string `json:"type"`
			Text *struct {
				Text string `json:"text"`
			} `json:"text"`
			Elements []struct {
				Text string `json:"text"`
			} `json:"elements"`
		}
		_ = json.Unmarshal(m.Blocks, &blocks)
		for _, b := range blocks {
			if b.Type != kind {
				continue
			}
			if b.Text != nil {
				out = append(out, b.Text.Text)
			}
			for _, e := range b.Elements {
				out = append(out, e.Text)
			}
		}
	}
	return out
}

// TestE2EEditorNoteKeptApart: the model's revision ends with an editor's note
// ("_Revised as asked: …_"). The card shows it beside the text, as the editor's note;
// the stored text, every later prompt and the report never carry it.
func TestE2EEditorNoteKeptApart(t *testing.T) {
	h := newWorkflowHarness(t)
	h.model.slots = true
	h.start()
	thread := h.startWorkflow(alice, "product-brief")
	h.click(thread, alice, "A: Direction A", "")
	h.submitModal(thread, alice, "Request changes", "", "lead with the price")
	card := h.latest(thread, "Approve", "")
	sections := strings.Join(blockTexts(h, thread, card, "section"), "\n")
	contexts := strings.Join(blockTexts(h, thread, card, "context"), "\n")
	if !strings.Contains(sections, "It follows: lead with the price") || strings.Contains(sections, "Revised as asked") {
		t.Errorf("the card's text = %q; want the revision without its note", sections)
	}
	if !strings.Contains(contexts, "✏️ *Editor's note:* _Revised as asked: lead with the price._") {
		t.Errorf("the card's notes = %q; want the editor's note", contexts)
	}
	h.click(thread, alice, "Approve", "")
	for range 4 { // audience, value_proposition, positioning, name
		h.click(thread, alice, "A: Direction A", "")
		h.click(thread, alice, "Approve", "")
	}
	report := h.file("product-brief.md")
	if strings.Contains(report, "Revised as asked") || strings.Contains(report, "[product]") || !strings.Contains(report, "It follows: lead with the price") {
		t.Errorf("report:\n%s", report)
	}
	// Every prompt after the revision has the problem's text without the note.
	var later int
	for _, r := range h.ai.Requests() {
		for _, m := range r.Chat.Messages {
			if strings.Contains(m.Content, "Revised as asked") {
				t.Errorf("a prompt carries the editor's note:\n%s", m.Content)
			}
			if strings.Contains(m.Content, "It follows: lead with the price") {
				later++
			}
		}
	}
	if later == 0 {
		t.Error("no prompt after the revision carries the revised problem")
	}
	ws := storedWorkflow(h.harness, thread)
	problem := ws.Artifacts["problem"]
	if strings.Contains(problem.Text, "Revised as asked") || problem.Note != "Revised as asked: lead with the price." {
		t.Errorf("stored problem: text %q, note %q", problem.Text, problem.Note)
	}
	for id, st := range ws.Artifacts {
		if ph := workflow.Placeholders(st.Text); len(ph) > 0 {
			t.Errorf("stored %s keeps %q: %q", id, ph, st.Text)
		}
	}
}

// TestE2EPipelinePlaceholderFixed: research for Section 1 leaves "[tool name]" in its
// notes, and the editor fills it when asked; Section 2's stays after the editor's
// pass. Before the research card is shown, each gets exactly one revision with the
// failing check as guidance; Section 1's card line and stored text are clean, and the
// card says that Section 2's placeholder is still there.
func TestE2EPipelinePlaceholderFixed(t *testing.T) {
	h := newBlogHarness(t)
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		resp := h.blog.respond(r)
		section := ""
		if mi := itemRE.FindStringSubmatch(r.LastUserMessage()); mi != nil {
			section = strings.TrimSpace(mi[3])
		}
		ma := artifactRE.FindStringSubmatch(systemText(r))
		if forced(r) != "commit_artifact_final_text" || ma == nil || ma[1] != "research" || (section != "Section 1" && section != "Section 2") {
			return resp
		}
		text := "Notes on " + section + ": teams run it in [tool name] [1](https://example.org/x)."
		if task := r.LastUserMessage(); strings.HasPrefix(task, "Revise") && strings.Contains(task, `The check "No placeholders" failed`) && section == "Section 1" {
			text = "Notes on " + section + ": teams run it in Slack [1](https://example.org/x)."
		}
		b, _ := json.Marshal(map[string]any{"text": text})
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "commit_artifact_final_text", Arguments: string(b)}}}
	})
	h.start()
	thread := h.toPipeline()
	h.waitFor("the research card", func() bool { return strings.Contains(h.transcript(thread), "Research notes 4/4") })
	h.waitFor("the article for review", func() bool { return strings.Contains(h.transcript(thread), "Meta description:") })
	fixes := map[string]int{}
	for _, r := range h.ai.Requests() {
		task := r.LastUserMessage()
		ma := artifactRE.FindStringSubmatch(systemText(r))
		mi := itemRE.FindStringSubmatch(task)
		if ma != nil && ma[1] == "research" && mi != nil && strings.HasPrefix(task, "Revise") {
			if !strings.Contains(task, "[tool name]") {
				t.Errorf("the fix of %s does not name the placeholder:\n%s", mi[3], task)
			}
			fixes[strings.TrimSpace(mi[3])]++
		}
	}
	if fixes["Section 1"] != 1 || fixes["Section 2"] != 1 || len(fixes) != 2 {
		t.Errorf("placeholder fixes of research = %v; want one each for Section 1 and Section 2", fixes)
	}
	tr := h.transcript(thread)
	if !strings.Contains(tr, "Notes on Section 1: teams run it in Slack") {
		t.Errorf("the research card does not show Section 1 fixed:\n%s", tr)
	}
	if !strings.Contains(tr, "❌ *No placeholders*: still in the text after an automatic fix: [tool name]") {
		t.Errorf("the research card does not say Section 2's placeholder is left:\n%s", tr)
	}
	ws := storedWorkflow(h.harness, thread)
	items := ws.Artifacts["research"].Items
	if len(items) < 2 || strings.Contains(items[0].Text, "[tool name]") || !strings.Contains(items[1].Text, "[tool name]") {
		t.Errorf("stored research items = %+v", items)
	}
	if strings.Contains(ws.Artifacts["research"].Text, "in [tool name] [1](https://example.org/x).\n\n## Section 2") {
		t.Errorf("stored research text keeps Section 1's placeholder: %q", ws.Artifacts["research"].Text)
	}
}
