package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
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
	// slots makes it write Positioning with a "[product]" slot, fill the slots its
	// editor is asked to fill, and end every other revision with an editor's note.
	slots bool
}

var (
	titleRE = regexp.MustCompile(`(?:Write|Revise) "([^"]+)"`)
	replyRE = regexp.MustCompile(`(?s)A person replied in the thread:\s*\n(.*?)\n\nWork out`)
	pickRE  = regexp.MustCompile(`\b([A-E])\b(?:,\s*but\s+([^"\n>]+))?`)
	askRE   = regexp.MustCompile(`(?s)(?:The team's request:|The team's instructions:)\s*\n(.*?)(?:\n\n|$)`)
)

func (m *cannedModel) respond(r openaitest.Request) openaitest.Response {
	m.mu.Lock()
	noCommit, delay, long, slots := m.noCommit, m.writeDelay, m.longText, m.slots
	m.mu.Unlock()
	// The function to call: the one tool_choice forces, or the commit function of a
	// write that is also offered tools (it calls none of them).
	name := forced(r)
	if name == "" || r.Chat.ToolChoice == nil {
		return openaitest.Response{Text: "An assistant answer."}
	}
	var fn *openai.FunctionDefinition
	for _, t := range r.Chat.Tools {
		if t.Function != nil && t.Function.Name == name {
			fn = t.Function
		}
	}
	if fn == nil {
		return openaitest.Response{Text: "An assistant answer."}
	}
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
		ma := askRE.FindStringSubmatch(task)
		switch {
		case slots && ma != nil && strings.Contains(ma[1], "Replace the placeholders"):
			text += " MealPlan is the product."
		case ma != nil:
			text += " It follows: " + strings.Trim(strings.TrimSpace(ma[1]), `>" `)
		case slots && title == "Positioning":
			text += " [product] is the product."
		}
		text += " **Key point.**" // Markdown, as models write it
		if slots && ma != nil && !strings.Contains(ma[1], "Replace the placeholders") {
			text += "\n\n_Revised as asked: " + strings.Trim(strings.TrimSpace(ma[1]), `>" `) + "._"
		}
		if long > 0 {
			para := "A long paragraph of the artifact, with enough words to fill Slack's limits. "
			text += "\n\n" + strings.Repeat(para, long/len(para)+1)[:long]
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
	case "classify_review_reply": // typed decisions: "hmm" is ambiguous, the rest a change
		decision := "change"
		if strings.Contains(task, "hmm") {
			decision = "ambiguous"
		}
		return call(map[string]any{"decision": decision, "confidence": 0.9})
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

// startWorkflow starts the workflow name with /threadwright start, as user, and
// returns its thread: the first message of the workflow, which the command's turn
// posts at the channel's top level. It waits for that message to be there, rather
// than taking the bot's being idle for the command's having run: a command whose turn
// has not begun yet (its input waits for a worker) leaves the bot just as idle.
func (h *wfHarness) startWorkflow(user, name string) string {
	h.t.Helper()
	before := len(h.emu.BotMessages(general, ""))
	h.slash(user, "start "+name)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	msgs, err := h.emu.WaitForMessages(ctx, general, "", before+1)
	if err != nil {
		h.t.Fatalf("the first message of workflow %s: %v", name, err)
	}
	return msgs[len(msgs)-1].TS
}

// jsonUnescape undoes Go's HTML-safe escaping in encoded blocks.
var jsonUnescape = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

// transcript returns the blocks (or, without blocks, the text) of every message in
// the thread, one message a line.
func (h *wfHarness) transcript(thread string) string {
	var b strings.Builder
	for _, m := range h.emu.Thread(general, thread) {
		if len(m.Blocks) > 0 {
			b.WriteString(jsonUnescape.Replace(string(m.Blocks)))
		} else {
			b.WriteString(m.Text)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func (h *wfHarness) ephemerals(user string) string { return h.ephemeralsIn(general, user) }

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
	thread := h.startWorkflow(alice, "product-brief")

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
	if tr := h.transcript(thread); strings.Contains(tr, "**Key point.**") || !strings.Contains(tr, "*Key point.*") {
		t.Errorf("the artifacts' Markdown was not shown as Slack mrkdwn")
	}
	if !strings.Contains(report, "**Key point.**") {
		t.Errorf("the report file lost its Markdown:\n%s", report)
	}
	assertNoSlackErrors(t, h.harness)
}

// TestE2EProductBriefReportIsClean: the model's first Positioning leaves "[product]"
// and its revisions end with an editor's note; the placeholder is filled before
// review, the evaluation reads as a summary, and the downloaded report has neither
// notes, evaluations nor placeholders.
func TestE2EProductBriefReportIsClean(t *testing.T) {
	h := newWorkflowHarness(t)
	h.model.slots = true
	h.start()
	thread := h.startWorkflow(alice, "product-brief")
	h.click(thread, alice, "A: Direction A", "")
	h.submitModal(thread, alice, "Request changes", "", "lead with the price")
	if tr := h.transcript(thread); !strings.Contains(tr, "Revised as asked: lead with the price") {
		t.Fatalf("the editor's note is not on the card:\n%s", tr)
	}
	h.click(thread, alice, "Approve", "")
	for range 4 { // audience, value_proposition, positioning, name
		h.click(thread, alice, "A: Direction A", "")
		h.click(thread, alice, "Approve", "")
	}
	tr := h.transcript(thread)
	if !strings.Contains(tr, "Positioning: the text the model wrote. MealPlan is the product.") {
		t.Errorf("Positioning was not shown with its placeholder filled:\n%s", tr)
	}
	if strings.Contains(tr, "[product]") || strings.Contains(tr, "Met:") || !strings.Contains(tr, "criteria met") {
		t.Errorf("the cards show a placeholder or a repeated criterion, or no evaluation summary:\n%s", tr)
	}
	var wrote, fixed bool
	for _, r := range h.ai.Requests() {
		task := r.LastUserMessage()
		wrote = wrote || strings.Contains(task, `Write "Positioning"`)
		fixed = fixed || strings.Contains(task, `Revise "Positioning"`) && strings.Contains(task, "[product]")
	}
	if !wrote || !fixed {
		t.Errorf("Positioning written %v, its placeholder given to the editor %v", wrote, fixed)
	}
	report := h.file("product-brief.md")
	for _, bad := range []string{"Revised as asked", "[product]", "criteria met", "✅", "❌", "Meets the criterion"} {
		if strings.Contains(report, bad) {
			t.Errorf("the report has %q:\n%s", bad, report)
		}
	}
	for _, want := range []string{"It follows: lead with the price", "MealPlan is the product."} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
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
	thread := h.startWorkflow(alice, "proposal")
	h.driveToEnd(thread)
	h.file("proposal.md")

	h.mention(thread, alice, "edit methodology add a pilot phase")
	// What depends on it is listed once the edit is approved: not before, when the
	// edited text might still change.
	if n := len(h.emu.BotMessages(general, thread)); h.find(h.emu.BotMessages(general, thread)[n-1].TS, "Keep", "") != nil {
		t.Fatal("the stale list came before the edited methodology was approved")
	}
	h.click(thread, alice, "Approve", "")
	stale := h.latest(thread, "Keep", "")
	buttons, _ := h.emu.Buttons(general, stale, alice)
	var keepFor []string
	for _, b := range buttons {
		if b.Label == "Keep" {
			keepFor = append(keepFor, b.Context)
		}
	}
	// Timeline, budget and conclusion are stale; only timeline can be handled now:
	// budget is written from timeline, and conclusion from both.
	if got := strings.Join(keepFor, " | "); !strings.Contains(got, "`timeline`") || len(keepFor) != 1 {
		t.Fatalf("stale artifacts offered: %s", got)
	}
	if m, _ := h.emu.Message(general, stale); !strings.Contains(m.Text+string(m.Blocks), "waits until *Timeline* is approved") {
		t.Fatalf("the list does not say what budget waits for: %s", m.Blocks)
	}
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

// startBrief starts product-brief by slash command and returns its thread, with the
// problem's options posted.
func (h *wfHarness) startBrief() string {
	h.t.Helper()
	thread := h.startWorkflow(alice, "product-brief")
	h.latest(thread, "A: Direction A", "")
	return thread
}

// optionsMessages counts the options messages with live buttons in the thread.
func (h *wfHarness) optionsMessages(thread string) int {
	n := 0
	for _, m := range h.emu.BotMessages(general, thread) {
		if h.find(m.TS, "Regenerate options", "") != nil {
			n++
		}
	}
	return n
}

func TestE2ERestartThroughEachDoor(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	thread := h.startBrief()
	h.click(thread, alice, "A: Direction A", "")
	h.click(thread, alice, "Approve", "")
	h.latest(thread, "A: Direction A", "") // audience's options

	restarts := func() int {
		n := 0
		for _, m := range h.emu.BotMessages(general, thread) {
			if strings.HasPrefix(m.Text, "Options for *Problem*") {
				n++
			}
		}
		return n
	}
	before := restarts()

	t.Run("SlashCommand", func(t *testing.T) {
		h.slash(alice, "restart problem")
		if got := restarts(); got != before+1 {
			t.Fatalf("problem's options posted %d times, want %d", got, before+1)
		}
	})
	t.Run("MentionInThread", func(t *testing.T) {
		h.mention(thread, alice, "restart problem")
		if got := restarts(); got != before+2 {
			t.Fatalf("problem's options posted %d times, want %d", got, before+2)
		}
	})
	t.Run("MessageShortcut", func(t *testing.T) {
		// The shortcut on problem's newest options message offers a menu only the user sees.
		var target string
		for _, m := range h.emu.BotMessages(general, thread) {
			if strings.Contains(m.Text, "Options for *Problem*") {
				target = m.TS
			}
		}
		env, err := h.emu.MessageShortcut(general, target, alice, "threadwright_actions")
		if err != nil {
			t.Fatal(err)
		}
		h.settleEnvelope(env)
		var menu emulator.Message
		h.waitFor("the ephemeral menu", func() bool {
			for _, m := range h.emu.Ephemerals(general, alice) {
				if strings.Contains(string(m.Blocks), "Restart this artifact") {
					menu = m
				}
			}
			return menu.TS != ""
		})
		env, err = h.emu.ClickButtonByLabel(general, menu.TS, alice, "Restart this artifact")
		if err != nil {
			t.Fatal(err)
		}
		h.settleEnvelope(env)
		if got := restarts(); got != before+3 {
			t.Fatalf("problem's options posted %d times, want %d", got, before+3)
		}
	})
	// Restarting problem made audience, which depends on it, start over too.
	if !strings.Contains(h.transcript(thread), "Options for *Target audience*") {
		t.Fatal("audience's options missing")
	}
}

func TestE2EStaleAndDoubleClicks(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	thread := h.startBrief()
	options := h.latest(thread, "A: Direction A", "")
	a := h.find(options, "A: Direction A", "")
	b := h.find(options, "B: Direction B", "")
	// A double click: two clicks on the same message before the bot answers.
	env1, err := h.emu.ClickOld(general, options, alice, *a)
	if err != nil {
		t.Fatal(err)
	}
	env2, err := h.emu.ClickOld(general, options, alice, *b)
	if err != nil {
		t.Fatal(err)
	}
	h.settleEnvelope(env1)
	h.settleEnvelope(env2)
	written := strings.Count(h.transcript(thread), "Problem: the text the model wrote.")
	if written != 1 {
		t.Fatalf("problem written %d times", written)
	}
	if eph := h.ephemerals(alice); !strings.Contains(eph, "no longer current") {
		t.Fatalf("the second click was not told: %q", eph)
	}
	// A click on an old message later (its buttons were drawn for an older revision).
	h.click(thread, alice, "Approve", "")
	env, err := h.emu.ClickOld(general, options, "U0BOB", *b)
	if err != nil {
		t.Fatal(err)
	}
	h.settleEnvelope(env)
	if eph := h.ephemerals("U0BOB"); !strings.Contains(eph, "no longer current") {
		t.Fatalf("a stale click was not told: %q", eph)
	}
	if strings.Count(h.transcript(thread), "Problem: the text the model wrote.") != 1 {
		t.Fatal("a stale click changed the artifact")
	}
}

func TestE2EApprovalRestricted(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["APPROVER_USER_IDS"] = "U0BOB"
	h.start()
	thread := h.startBrief()
	h.click(thread, alice, "A: Direction A", "") // anyone may choose
	h.click(thread, alice, "Approve", "")
	if eph := h.ephemerals(alice); !strings.Contains(eph, "only the approvers (<@U0BOB>) may approve") {
		t.Fatalf("alice was not refused: %q", eph)
	}
	if strings.Contains(h.transcript(thread), "Approved by") {
		t.Fatal("a refused approval was recorded")
	}
	h.click(thread, "U0BOB", "Approve", "")
	if !strings.Contains(h.transcript(thread), "Approved by <@U0BOB>") {
		t.Fatal("bob's approval was not recorded")
	}
}

func TestE2ECommitToolNeverCalled(t *testing.T) {
	h := newWorkflowHarness(t)
	h.model.noCommit = true
	h.start()
	thread := h.startWorkflow(alice, "product-brief")
	h.waitFor("the failure message", func() bool {
		return strings.Contains(h.transcript(thread), "did not save")
	})
	if n := h.optionsMessages(thread); n != 0 {
		t.Fatalf("%d options messages after a failed commit", n)
	}
	// 1 call + 2 reminders, and nothing after.
	var optionCalls int
	for _, r := range h.ai.Requests() {
		if len(r.Chat.Tools) == 1 && r.Chat.Tools[0].Function.Name == "commit_artifact_options" {
			optionCalls++
		}
	}
	if optionCalls != 3 {
		t.Fatalf("%d option calls, want 3", optionCalls)
	}
	// Once the model behaves, a restart produces the options.
	h.model.mu.Lock()
	h.model.noCommit = false
	h.model.mu.Unlock()
	h.mention(thread, alice, "restart problem")
	h.latest(thread, "A: Direction A", "")
}

func TestE2EInvalidWorkflowFileRefusesStartup(t *testing.T) {
	h := newWorkflowHarness(t)
	dir := t.TempDir()
	bad := "name: broken\ntitle: Broken\nartifacts:\n  - id: a\n    title: A\n    depends_on: [missing]\n"
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env["WORKFLOWS_DIR"] = dir
	for k, v := range map[string]string{"SLACK_BOT_TOKEN": "xoxb-emulator", "SLACK_APP_TOKEN": "xapp-emulator", "SLACK_API_URL": h.emu.URL(),
		"OPENAI_API_KEY": "sk-x", "OPENAI_BASE_URL": h.ai.URL(), "DATA_DIR": t.TempDir(), "HTTP_ADDR": "", "WORKFLOWS_DIR": dir} {
		t.Setenv(k, v)
	}
	m := NewMain()
	if err := LoadConfig(&m.Config); err != nil {
		t.Fatal(err)
	}
	err := m.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "broken.yaml:6:") || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("start-up with an invalid workflow: %v", err)
	}
}

func TestE2ESlashCommandNamingNothing(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	h.slash(alice, "start nosuchflow")
	if eph := h.ephemerals(alice); !strings.Contains(eph, "no workflow named `nosuchflow`") || !strings.Contains(eph, "`product-brief`") {
		t.Fatalf("unknown workflow: %q", eph)
	}
	h.slash(alice, "frobnicate")
	if eph := h.ephemerals(alice); !strings.Contains(eph, "don't know the command `frobnicate`") || !strings.Contains(eph, "restart <artifact>") {
		t.Fatalf("unknown command: %q", eph)
	}
	h.slash(alice, "restart budget")
	if eph := h.ephemerals(alice); !strings.Contains(eph, "no workflow running here") {
		t.Fatalf("no workflow: %q", eph)
	}
	thread := h.startBrief()
	h.slash(alice, "restart budget")
	if tr := h.transcript(thread); !strings.Contains(tr, "no artifact `budget`") || !strings.Contains(tr, "`audience`") {
		t.Fatalf("unknown artifact: %s", tr)
	}
	if len(h.emu.BotMessages(general, "")) != 1 {
		t.Fatal("a failed command posted in the channel")
	}
}

// TestE2EWorkflowResumesAfterRestart stops the bot while an artifact is being written
// and checks that the next start finishes it, once.
func TestE2EWorkflowResumesAfterRestart(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["SHUTDOWN_TIMEOUT"] = "100ms"
	h.start()
	thread := h.startBrief()
	h.model.mu.Lock()
	h.model.writeDelay = 3 * time.Second
	h.model.mu.Unlock()
	ts := h.latest(thread, "A: Direction A", "")
	b := h.find(ts, "A: Direction A", "")
	env, _ := h.emu.ClickButton(general, ts, alice, b.ActionID)
	h.waitFor("the write call", func() bool {
		for _, r := range h.ai.Requests() {
			if r.Chat.Tools != nil && r.Chat.Tools[0].Function.Name == "commit_artifact_final_text" {
				return true
			}
		}
		return false
	})
	h.stop() // the turn is cancelled mid-write; its input stays pending
	if e, _ := h.emu.Envelope(env); !e.Acked {
		t.Fatal("the click was not acked")
	}
	if strings.Contains(h.transcript(thread), "Problem: the text") {
		t.Fatal("the artifact was written before the restart")
	}
	h.model.mu.Lock()
	h.model.writeDelay = 0
	h.model.mu.Unlock()
	h.start()
	h.latest(thread, "Approve", "")
	if n := strings.Count(h.transcript(thread), "Problem: the text the model wrote."); n != 1 {
		t.Fatalf("problem written %d times after the restart", n)
	}
	h.click(thread, alice, "Approve", "")
	h.waitFor("audience's options", func() bool { return strings.Contains(h.transcript(thread), "Options for *Target audience*") })
}

func TestE2ELongArtifactKeepsSlackLimits(t *testing.T) {
	h := newWorkflowHarness(t)
	h.model.longText = 30000
	h.start()
	thread := h.startBrief()
	h.click(thread, alice, "A: Direction A", "")
	h.click(thread, alice, "Approve", "")
	assertNoSlackErrors(t, h.harness)
	if !strings.Contains(h.transcript(thread), "Approved by <@U0ALICE>") {
		t.Fatal("the long artifact could not be approved")
	}
}

// TestE2EWorkflowFollowsTheUsersLanguage: a user whose Slack locale is Russian gets
// Russian buttons and messages, and the model is told to write in Russian.
func TestE2EWorkflowFollowsTheUsersLanguage(t *testing.T) {
	cfg := emulator.DefaultConfig()
	cfg.Users = append(cfg.Users, emulator.User{ID: "U0IVAN", Name: "ivan", RealName: "Иван", Locale: "ru-RU"})
	h := &wfHarness{harness: newHarness(t, emulator.Config{Users: cfg.Users}), model: &cannedModel{}}
	h.ai.Handle(h.model.respond)
	h.start()
	thread := h.startWorkflow("U0IVAN", "product-brief")
	h.latest(thread, "Другие варианты", "")
	tr := h.transcript(thread)
	for _, want := range []string{"запускает *Product brief*", "Варианты для *Problem*", "Выберите кнопкой"} {
		if !strings.Contains(tr, want) {
			t.Errorf("transcript lacks %q", want)
		}
	}
	h.click(thread, "U0IVAN", "A: Direction A", "")
	h.latest(thread, "Утвердить", "")
	var russian bool
	for _, r := range h.ai.Requests() {
		if strings.Contains(r.SystemPrompt(), "Russian") {
			russian = true
		}
	}
	if !russian {
		t.Error("the model was not asked to write in Russian")
	}
}
