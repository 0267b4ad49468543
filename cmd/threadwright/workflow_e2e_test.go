package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents/openaitest"
	"github.com/threadwright/threadwright/bot/emulator"
)

// cannedModel answers the workflow agents' forced tool calls from the request alone:
// the options count and criterion ids come from the tool's JSON schema, the artifact's
// title and the team's instructions from the task message. Its texts say what they
// were made from, so tests can follow them.
type cannedModel struct {
	mu sync.Mutex
	// noCommit makes it answer option requests in prose, never calling the tool.
	noCommit bool
	// writeDelay delays writing an artifact.
	writeDelay time.Duration
	// longText, when positive, is the length of every written artifact.
	longText int
}

var (
	titleRE = regexp.MustCompile(`(?:Write|Revise) "([^"]+)"`)
	replyRE = regexp.MustCompile(`(?s)A person replied in the thread:\s*\n(.*?)\n\nWork out`)
	pickRE  = regexp.MustCompile(`\b([A-E])\b(?:,\s*but\s+([^"\n>]+))?`)
	askRE   = regexp.MustCompile(`(?s)(?:The team's request:|The team's instructions:)\s*\n(.*?)(?:\n\n|$)`)
)

func (m *cannedModel) respond(r openaitest.Request) openaitest.Response {
	m.mu.Lock()
	noCommit, delay, long := m.noCommit, m.writeDelay, m.longText
	m.mu.Unlock()
	if len(r.Chat.Tools) != 1 || r.Chat.Tools[0].Function == nil || r.Chat.ToolChoice == nil {
		return openaitest.Response{Text: "An assistant answer."}
	}
	fn := r.Chat.Tools[0].Function
	raw, _ := json.Marshal(fn.Parameters)
	var schema struct {
		Properties struct {
			Options struct {
				MaxItems int `json:"maxItems"`
			} `json:"options"`
			Results struct {
				Items struct {
					Properties struct {
						ID struct {
							Enum []string `json:"enum"`
						} `json:"id"`
					} `json:"properties"`
				} `json:"items"`
			} `json:"results"`
		} `json:"properties"`
	}
	_ = json.Unmarshal(raw, &schema)
	task := r.LastUserMessage()
	title := "the artifact"
	if mt := titleRE.FindStringSubmatch(task); mt != nil {
		title = mt[1]
	}
	call := func(args any) openaitest.Response {
		b, _ := json.Marshal(args)
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: fn.Name, Arguments: string(b)}}}
	}
	switch fn.Name {
	case "commit_artifact_options":
		if noCommit {
			return openaitest.Response{Text: "Here are some thoughts, but I will not call the tool."}
		}
		var opts []map[string]string
		for i := range schema.Properties.Options.MaxItems {
			l := string(rune('A' + i))
			opts = append(opts, map[string]string{"label": l, "title": "Direction " + l, "text": "Option " + l + " proposed by the model."})
		}
		return call(map[string]any{"options": opts})
	case "commit_artifact_selection":
		sel := map[string]any{"label": "", "instructions": "", "regenerate": false}
		if mr := replyRE.FindStringSubmatch(task); mr != nil {
			if mp := pickRE.FindStringSubmatch(mr[1]); mp != nil {
				sel["label"], sel["instructions"] = mp[1], strings.TrimSpace(mp[2])
			}
		}
		return call(sel)
	case "commit_artifact_final_text":
		text := title + ": the text the model wrote."
		if ma := askRE.FindStringSubmatch(task); ma != nil {
			text += " It follows: " + strings.Trim(strings.TrimSpace(ma[1]), `>" `)
		}
		if long > 0 {
			text += "\n\n" + strings.Repeat("A long paragraph of the artifact, with enough words to fill Slack's limits. ", long/78+1)[:long]
		}
		resp := call(map[string]any{"text": text})
		resp.Delay = delay
		return resp
	case "commit_evaluation":
		var results []map[string]any
		for _, id := range schema.Properties.Results.Items.Properties.ID.Enum {
			results = append(results, map[string]any{"id": id, "pass": true, "reason": "Meets the criterion."})
		}
		return call(map[string]any{"results": results})
	case "commit_final_docset":
		return call(map[string]any{"summary": "A complete document, ready to share."})
	}
	return openaitest.Response{Text: "?"}
}

// wfHarness drives workflows through the emulator.
type wfHarness struct {
	*harness
	model *cannedModel
}

func newWorkflowHarness(t *testing.T) *wfHarness {
	h := &wfHarness{harness: newHarness(t, emulator.Config{}), model: &cannedModel{}}
	h.ai.Handle(h.model.respond)
	return h
}

// latest waits until the bot's newest message in the thread has a button labelled
// label (optionally under context text) and returns that message's ts.
func (h *wfHarness) latest(thread, label, under string) string {
	h.t.Helper()
	var ts string
	h.waitFor(fmt.Sprintf("a message with a %q button", label), func() bool {
		for _, m := range h.emu.BotMessages(general, thread) {
			if h.find(m.TS, label, under) != nil {
				ts = m.TS
			}
		}
		return ts != ""
	})
	return ts
}

func (h *wfHarness) find(ts, label, under string) *emulator.Button {
	buttons, _ := h.emu.Buttons(general, ts, alice)
	for _, b := range buttons {
		if strings.HasPrefix(b.Label, label) && strings.Contains(b.Context, under) {
			return &b
		}
	}
	return nil
}

// click clicks the button labelled label (under the text under) on the newest message that
// has it, as user, and waits until the bot acted (its ack and the turn).
func (h *wfHarness) click(thread, user, label, under string) {
	h.t.Helper()
	ts := h.latest(thread, label, under)
	b := h.find(ts, label, under)
	env, err := h.emu.ClickButton(general, ts, user, b.ActionID)
	if err != nil {
		h.t.Fatal(err)
	}
	h.settleEnvelope(env)
}

// submitModal clicks a modal button and submits text in the modal.
func (h *wfHarness) submitModal(thread, user, label, under, text string) {
	h.t.Helper()
	ts := h.latest(thread, label, under)
	b := h.find(ts, label, under)
	if _, err := h.emu.ClickButton(general, ts, user, b.ActionID); err != nil {
		h.t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.emu.WaitForView(ctx, user); err != nil {
		h.t.Fatal(err)
	}
	env, err := h.emu.SubmitModal(user, text)
	if err != nil {
		h.t.Fatal(err)
	}
	h.settleEnvelope(env)
}

// settleEnvelope waits for the envelope's ack and then for the bot to be idle.
func (h *wfHarness) settleEnvelope(env string) {
	h.t.Helper()
	h.waitFor("the ack of "+env, func() bool { e, ok := h.emu.Envelope(env); return ok && e.Acked })
	h.idle()
}

// idle waits until the bot has no input queued or running.
func (h *wfHarness) idle() {
	h.t.Helper()
	time.Sleep(20 * time.Millisecond) // let the dispatcher hand the input over
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := h.main.Wait(ctx); err != nil {
		h.t.Fatal(err)
	}
}

func (h *wfHarness) slash(user, text string) {
	h.t.Helper()
	env, err := h.emu.SlashCommand(general, user, "/threadwright", text)
	if err != nil {
		h.t.Fatal(err)
	}
	h.settleEnvelope(env)
	h.idle()
}

func (h *wfHarness) mention(thread, user, text string) {
	h.t.Helper()
	h.post(general, user, "<@U0BOT> "+text, thread)
	h.idle()
	h.idle()
}

// thread returns the ts of the newest top-level bot message (a workflow's root).
func (h *wfHarness) newestRoot() string {
	msgs := h.emu.BotMessages(general, "")
	if len(msgs) == 0 {
		h.t.Fatal("no top-level bot message")
	}
	return msgs[len(msgs)-1].TS
}

// texts returns every bot message text and block text in the thread, joined.
func (h *wfHarness) transcript(thread string) string {
	var b strings.Builder
	for _, m := range h.emu.Thread(general, thread) {
		b.WriteString(m.Text)
		b.Write(m.Blocks)
		b.WriteString("\n")
	}
	return b.String()
}

func (h *wfHarness) ephemerals(user string) string {
	var b strings.Builder
	for _, m := range h.emu.Ephemerals(general, user) {
		b.WriteString(m.Text)
		b.Write(m.Blocks)
		b.WriteString("\n")
	}
	return b.String()
}

func (h *wfHarness) file(name string) string {
	h.t.Helper()
	var content string
	h.waitFor("the file "+name, func() bool {
		for _, f := range h.emu.Files() {
			if f.Name == name && f.Complete {
				content = string(f.Content)
				return true
			}
		}
		return false
	})
	return content
}

func TestE2EProductBrief(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	h.slash(alice, "start product-brief")
	thread := h.newestRoot()

	// problem: a button; audience: a free-text reply; value_proposition: changes
	// requested through the modal; the rest: buttons.
	h.click(thread, alice, "B: Direction B", "")
	h.click(thread, alice, "Approve", "")
	h.latest(thread, "A: Direction A", "")
	h.post(general, alice, "C, but shorter", thread)
	h.idle()
	h.idle()
	if tr := h.transcript(thread); !strings.Contains(tr, "Target audience: the text the model wrote. It follows: shorter") {
		t.Fatalf("the reply did not pick C with an edit:\n%s", tr)
	}
	h.click(thread, alice, "Approve", "")
	h.click(thread, alice, "A: Direction A", "")
	h.submitModal(thread, alice, "Request changes", "", "lead with the price")
	if tr := h.transcript(thread); !strings.Contains(tr, "It follows: lead with the price") {
		t.Fatalf("the change request was not applied:\n%s", tr)
	}
	h.click(thread, alice, "Approve", "")
	for range 2 { // positioning, name
		h.click(thread, alice, "A: Direction A", "")
		h.click(thread, alice, "Approve", "")
	}
	report := h.file("product-brief.md")
	for _, want := range []string{"Target audience: the text the model wrote. It follows: shorter", "It follows: lead with the price", "Name: the text"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	if tr := h.transcript(thread); !strings.Contains(tr, "A complete document, ready to share.") {
		t.Errorf("no summary posted with the report")
	}
	assertNoSlackErrors(t, h.harness)
}

// assertNoSlackErrors checks that Slack rejected none of the bot's calls (every message
// kept Slack's limits).
func assertNoSlackErrors(t *testing.T, h *harness) {
	t.Helper()
	for _, c := range h.emu.Calls("") {
		if c.Error != "" {
			t.Errorf("%s answered %s", c.Method, c.Error)
		}
	}
}

// driveToEnd picks option A and approves until nothing waits.
func (h *wfHarness) driveToEnd(thread string) {
	h.t.Helper()
	for range 30 {
		var clicked bool
		for _, label := range []string{"A: Direction A", "Approve"} {
			msgs := h.emu.BotMessages(general, thread)
			if len(msgs) == 0 {
				continue
			}
			last := msgs[len(msgs)-1]
			if h.find(last.TS, label, "") != nil {
				h.click(thread, alice, label, "")
				clicked = true
				break
			}
		}
		if !clicked {
			return
		}
	}
}

func TestE2EProposalEditStaleKeepRegenerateExport(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	h.slash(alice, "start proposal")
	thread := h.newestRoot()
	h.driveToEnd(thread)
	h.file("proposal.md")

	h.mention(thread, alice, "edit methodology add a pilot phase")
	stale := h.latest(thread, "Keep", "")
	buttons, _ := h.emu.Buttons(general, stale, alice)
	var keepFor []string
	for _, b := range buttons {
		if b.Label == "Keep" {
			keepFor = append(keepFor, b.Context)
		}
	}
	if got := strings.Join(keepFor, " | "); !strings.Contains(got, "`timeline`") || !strings.Contains(got, "`budget`") || !strings.Contains(got, "`conclusion`") || len(keepFor) != 3 {
		t.Fatalf("stale artifacts offered: %s", got)
	}
	h.click(thread, alice, "Approve", "")
	h.click(thread, alice, "Keep", "`timeline`")
	h.submitModal(thread, alice, "Regenerate with guidance", "`budget`", "use the pilot costs")
	if tr := h.transcript(thread); !strings.Contains(tr, "It follows: use the pilot costs") {
		t.Fatalf("budget not regenerated with the guidance")
	}
	h.slash(alice, "export")
	draft := h.file("proposal-draft.md")
	if !strings.Contains(draft, "add a pilot phase") || !strings.Contains(draft, "not approved") {
		t.Fatalf("draft export:\n%s", draft)
	}
	assertNoSlackErrors(t, h.harness)
}
