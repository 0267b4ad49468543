package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/logtest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// statusesOf returns the statuses task id went through, in order.
func statusesOf(m emulator.Message, id string) []string {
	var out []string
	for _, u := range m.TaskUpdates {
		if u.ID == id {
			out = append(out, u.Status)
		}
	}
	return out
}

// streamedTurn waits for the one bot message of the thread ts to stop streaming and
// returns it; the turn posted nothing else (no progress message).
func (h *harness) streamedTurn(t *testing.T, ts, answer string) emulator.Message {
	t.Helper()
	h.waitFor("the streamed answer", func() bool {
		msgs := h.emu.BotMessages(general, ts)
		// The answer, then what the synthesizer adds (its sources), in one message.
		return len(msgs) > 0 && !msgs[0].Streaming && strings.HasPrefix(msgs[0].Text, answer)
	})
	h.idle()
	msgs := h.emu.BotMessages(general, ts)
	if len(msgs) != 1 {
		var texts []string
		for _, m := range msgs {
			texts = append(texts, m.Text)
		}
		t.Fatalf("%d bot messages %q, want the streamed answer only", len(msgs), texts)
	}
	return msgs[0]
}

// TestE2EToolRunStreamedAsTasks: a turn's tool calls stream as task cards in the
// answer's message (a timeline): each pending, in progress, then complete or error,
// fetch_url's with the page as its URL source, and no progress message is posted.
// The thread's agent session showed Slack's own Stop while the turn ran (processing),
// so the finished message carries no Stop of its own: only the feedback buttons.
func TestE2EToolRunStreamedAsTasks(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, "Service status: green")
	}))
	defer page.Close()
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.env["FETCH_ALLOW_PRIVATE"] = "true"
	h.tools = func(r *agents.Registry) error {
		r.MustRegister(agents.ToolSpec{Name: "broken", Description: "Always fails", Category: "Test",
			Parameters: json.RawMessage(`{"type":"object","properties":{}}`)},
			agents.ToolFunc(func(context.Context, json.RawMessage) (string, error) { return "", errors.New("broken is down") }))
		return nil
	}
	h.start()
	const answer = "The service is green."
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{ID: "call_f", Name: "fetch_url", Arguments: fmt.Sprintf(`{"url":%q}`, page.URL)},
			{ID: "call_b", Name: "broken", Arguments: "{}"},
		}},
		openaitest.Response{Text: answer},
	)
	ts := h.post(general, alice, "<@U0BOT> is the service up?", "")
	m := h.streamedTurn(t, ts, answer)

	// The batch's calls are shown pending together, in one chat.appendStream.
	for _, c := range h.emu.Calls("chat.appendStream") {
		if chunks := c.Params.Get("chunks"); strings.Contains(chunks, "task_update") {
			if !strings.Contains(chunks, `"call_f"`) || !strings.Contains(chunks, `"call_b"`) || strings.Count(chunks, `"pending"`) != 2 {
				t.Errorf("first task append %s, want both calls pending", chunks)
			}
			break
		}
	}
	if m.TaskDisplayMode != "timeline" {
		t.Errorf("task_display_mode %q, want timeline", m.TaskDisplayMode)
	}
	if got, want := statusesOf(m, "call_f"), []string{"pending", "in_progress", "complete"}; !slices.Equal(got, want) {
		t.Errorf("fetch_url's statuses %v, want %v", got, want)
	}
	if got, want := statusesOf(m, "call_b"), []string{"pending", "in_progress", "error"}; !slices.Equal(got, want) {
		t.Errorf("broken's statuses %v, want %v", got, want)
	}
	if len(m.Tasks) != 2 {
		t.Fatalf("tasks %+v, want 2", m.Tasks)
	}
	fetch := m.Tasks[slices.IndexFunc(m.Tasks, func(x emulator.Task) bool { return x.ID == "call_f" })]
	if fetch.Title != "fetch_url "+page.URL || len(fetch.Sources) != 1 || fetch.Sources[0].URL != page.URL || fetch.Sources[0].Text == "" {
		t.Errorf("fetch_url task %+v, want its title and the page as a URL source", fetch)
	}
	if !strings.Contains(fetch.Output, "Service status: green") {
		t.Errorf("fetch_url task's output %q", fetch.Output)
	}
	broken := m.Tasks[slices.IndexFunc(m.Tasks, func(x emulator.Task) bool { return x.ID == "call_b" })]
	if !strings.Contains(broken.Output, "broken is down") {
		t.Errorf("broken task's output %q", broken.Output)
	}
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			Text  json.RawMessage `json:"text"`
			Value string          `json:"value"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil || len(blocks) != 1 || blocks[0].Type != "context_actions" {
		t.Errorf("blocks %s, want the feedback buttons alone (no Stop: the session has its own)", m.Blocks)
	}
	if s, ok := h.emu.Session(general, ts); !ok || len(s.History) == 0 || s.History[0] != "processing" || s.Status != "active" {
		t.Errorf("session %+v (%t), want set processing as the turn began, active once answered", s, ok)
	}
	// The fetched page is listed as the answer's source, in the streamed message.
	if !strings.Contains(m.Text, "**Sources**") || !strings.Contains(m.Text, page.URL) {
		t.Errorf("streamed answer %q, want the page listed as its source", m.Text)
	}
}

// TestE2EStreamedStopWhereSessionsAreRefused: where Slack refuses agent sessions
// (no native Stop), a streamed turn's first block is a Stop button of its own; it
// stays in the finished message, where a click stops nothing and posts nothing.
func TestE2EStreamedStopWhereSessionsAreRefused(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	h.emu.RefuseSessions(true)
	ts, m := streamedTimeTurn(t, h)
	if _, ok := h.emu.Session(general, ts); ok {
		t.Error("a session was created although Slack refuses them")
	}
	if _, err := h.emu.ClickButtonByLabel(general, m.TS, alice, "Stop"); err != nil {
		t.Fatal(err)
	}
	h.idle()
	if msgs := h.emu.BotMessages(general, ts); len(msgs) != 1 || !strings.HasPrefix(msgs[0].Text, "It is noon.") {
		t.Errorf("after a late Stop: %d bot messages, want the answer alone", len(msgs))
	}
}

// TestE2EStreamedStopWhenTheSessionIsNotSet: when the call that sets the session
// processing fails, Slack shows no native Stop for the turn, so its stream carries a
// Stop button of its own.
func TestE2EStreamedStopWhenTheSessionIsNotSet(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	h.emu.FailNext("agents.sessions.setStatus", "internal_error")
	ts, _ := streamedTimeTurn(t, h)
	if calls := h.emu.Calls("assistant.threads.setStatus"); len(calls) != 1 || calls[0].Params.Get("thread_ts") != ts || calls[0].Params.Get("status") != turns.StatusThinking {
		t.Errorf("statuses set %+v; want %q in the thread, which no session shows working", calls, turns.StatusThinking)
	}
}

// TestE2EStreamedStopWithoutTheStopEvent: where the app is not subscribed to
// agent_session_stopped, Slack sets sessions processing but shows no Stop (it warns
// missing_agent_session_stopped_event_subscription), so the stream carries a Stop
// button of its own, and the log says once what to do. The session's loading
// indicator shows that the bot works: no status is set.
func TestE2EStreamedStopWithoutTheStopEvent(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	var logs logtest.Buffer
	h.logs = &logs
	h.start()
	h.emu.UnsubscribeSessionStop(true)
	ts, _ := streamedTimeTurn(t, h)
	if s, ok := h.emu.Session(general, ts); !ok || len(s.History) == 0 || s.History[0] != "processing" {
		t.Errorf("session %+v (%t), want it set processing all the same", s, ok)
	}
	h.ai.Push(openaitest.Response{Text: "Still noon."})
	ts = h.post(general, alice, "<@U0BOT> and now?", "")
	h.replies(general, ts, 1)
	h.idle()
	if n := strings.Count(logs.String(), "not subscribed to the agent_session_stopped event"); n != 1 {
		t.Errorf("%d log lines say the Stop event is missing; want one", n)
	}
	if calls := h.emu.Calls("assistant.threads.setStatus"); len(calls) != 0 {
		t.Errorf("%d statuses set where the session shows the work", len(calls))
	}
}

// TestE2ENativeStopInTaskStream: with sessions, a streamed turn is stopped by the
// session's native Stop while its tool runs, also after its stream went on in a
// fresh message (STREAM_ROTATION low for the test), whose chat.stopStream set the
// session active: the turn sets it processing again, so that Slack's Stop shows.
func TestE2ENativeStopInTaskStream(t *testing.T) {
	for _, tc := range []struct {
		name, rotation string
	}{{"OneMessage", ""}, {"Rotated", "1ns"}} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, emulator.Config{})
			h.env["STREAM_ANSWERS"] = "true"
			if tc.rotation != "" {
				h.env["STREAM_ROTATION"] = tc.rotation
			}
			h.tools = registerSlowReport
			h.start()
			h.ai.Handle(func(r openaitest.Request) openaitest.Response {
				if len(r.ToolResults()) == 0 {
					return openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_s", Name: "slow_report", Arguments: "{}"}}}
				}
				return openaitest.Response{Text: "The report is ready."}
			})
			ts := h.post(general, alice, "<@U0BOT> build the quarterly report", "")
			h.waitFor("the task to run", func() bool {
				for _, m := range h.emu.BotMessages(general, ts) {
					if slices.Contains(statusesOf(m, "call_s"), "in_progress") {
						return true
					}
				}
				return false
			})
			if tc.rotation != "" {
				if n := len(h.emu.Calls("chat.startStream")); n < 2 {
					t.Fatalf("chat.startStream called %d times; want the stream to go on in a fresh message", n)
				}
			}
			waitSession(h, general, ts, "a processing session", func(s emulator.AgentSession) bool {
				return s.Status == conversation.SessionProcessing
			})
			if _, err := h.emu.StopSession(general, ts, alice); err != nil {
				t.Fatal(err)
			}
			h.waitFor("the stopped reply", func() bool {
				return slices.ContainsFunc(h.emu.BotMessages(general, ts), func(m emulator.Message) bool {
					return strings.HasPrefix(m.Text, "Stopped at <@U0ALICE>'s request")
				})
			})
			h.idle()
			for _, m := range h.emu.BotMessages(general, ts) {
				if strings.Contains(string(m.Blocks), `"Stop"`) {
					t.Errorf("message %q carries a Stop button of its own: %s", m.Text, m.Blocks)
				}
			}
		})
	}
}

// streamedTimeTurn asks what time it is, a turn with a tool call whose answer
// streams, and checks that the answer's message holds a Stop button, then the
// feedback buttons. It returns the thread's ts and the answer's message.
func streamedTimeTurn(t *testing.T, h *harness) (string, emulator.Message) {
	t.Helper()
	const answer = "It is noon."
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_t", Name: "get_current_time", Arguments: "{}"}}},
		openaitest.Response{Text: answer},
	)
	ts := h.post(general, alice, "<@U0BOT> what time is it?", "")
	m := h.streamedTurn(t, ts, answer)
	var blocks []struct {
		Type     string `json:"type"`
		Elements []struct {
			Text json.RawMessage `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal(m.Blocks, &blocks); err != nil || len(blocks) != 2 || blocks[0].Type != "actions" ||
		len(blocks[0].Elements) == 0 || !strings.Contains(string(blocks[0].Elements[0].Text), "Stop") || blocks[1].Type != "context_actions" {
		t.Errorf("blocks %s, want Stop, then the feedback buttons", m.Blocks)
	}
	return ts, m
}

// TestE2EStopInTaskStream: where Slack refuses agent sessions, the Stop button of a
// streamed turn stops it while its tool runs; the task ends in error and the reply
// says who stopped it. (With sessions, the session's native Stop does:
// TestE2ENativeStopEndsAnAssistantTurnOnce.)
func TestE2EStopInTaskStream(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.tools = registerSlowReport
	h.start()
	h.emu.RefuseSessions(true)
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if len(r.ToolResults()) == 0 {
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_s", Name: "slow_report", Arguments: "{}"}}}
		}
		return openaitest.Response{Text: "The report is ready."}
	})
	ts := h.post(general, alice, "<@U0BOT> build the quarterly report", "")
	var streamed emulator.Message
	h.waitFor("the task to run", func() bool {
		msgs := h.emu.BotMessages(general, ts)
		if len(msgs) == 0 {
			return false
		}
		streamed = msgs[0]
		return slices.Contains(statusesOf(streamed, "call_s"), "in_progress")
	})
	if _, err := h.emu.ClickButtonByLabel(general, streamed.TS, alice, "Stop"); err != nil {
		t.Fatal(err)
	}
	h.waitFor("the stopped reply", func() bool {
		for _, m := range h.emu.BotMessages(general, ts) {
			if strings.HasPrefix(m.Text, "Stopped at <@U0ALICE>'s request") {
				return true
			}
		}
		return false
	})
	h.waitFor("the stream to stop", func() bool {
		m, _ := h.emu.Message(general, streamed.TS)
		return !m.Streaming
	})
	m, _ := h.emu.Message(general, streamed.TS)
	if got := statusesOf(m, "call_s"); got[len(got)-1] != "error" {
		t.Errorf("slow_report's statuses %v, want it to end in error", got)
	}
}

// TestE2EPlannerStreamedAsPlan: the planner's turn streams as a plan (task_display_mode
// plan) titled with the request's intent: planning, each plan task shown pending up
// front and advancing, the check and the answer's writing, every one complete, and
// the answer under them in the same message.
func TestE2EPlannerStreamedAsPlan(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STRATEGY"] = "planner"
	h.env["STREAM_ANSWERS"] = "true"
	const answer = "The launch is on March 3, in 12 days."
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if resp, ok := launchPlan(r); ok {
			return resp
		}
		task := r.SystemPrompt() + r.LastUserMessage()
		switch {
		case strings.Contains(task, "## The task (b)"):
			return openaitest.Response{Text: "RESULT-B: 12 days"}
		case strings.Contains(task, "## The task (a)"):
			return openaitest.Response{Text: "RESULT-A: March 3"}
		}
		return openaitest.Response{Text: answer}
	})
	h.start()
	ts := h.post(general, alice, "<@U0BOT> how many days until the launch?", "")
	m := h.streamedTurn(t, ts, answer)

	if m.TaskDisplayMode != "plan" || m.PlanTitle != "days until the launch" {
		t.Errorf("mode %q, plan title %q; want plan, the intent", m.TaskDisplayMode, m.PlanTitle)
	}
	var ids []string
	for _, task := range m.Tasks {
		ids = append(ids, task.ID)
		if task.Status != "complete" {
			t.Errorf("task %s ended %s", task.ID, task.Status)
		}
	}
	if want := []string{"plan", "task-a", "task-b", "check-1", "answer"}; !slices.Equal(ids, want) {
		t.Errorf("tasks %v, want %v", ids, want)
	}
	if got, want := statusesOf(m, "task-b"), []string{"pending", "in_progress", "complete"}; !slices.Equal(got, want) {
		t.Errorf("task b's statuses %v, want %v", got, want)
	}
	// Both plan tasks were shown before either ran.
	first := func(id, status string) int {
		return slices.IndexFunc(m.TaskUpdates, func(u emulator.Task) bool { return u.ID == id && u.Status == status })
	}
	if first("task-b", "pending") > first("task-a", "in_progress") {
		t.Error("task b was not shown before task a ran")
	}
	if b := m.Tasks[2]; b.Title != "Compute the days until the launch" || b.Output != "RESULT-B: 12 days" {
		t.Errorf("task b %+v", b)
	}
}

// TestE2ETasksRefusedFallBackToProgressMessage: where Slack refuses thinking steps
// (task_display_mode and task chunks), the turn shows its progress in a separate
// message with Stop, as before, and posts its answer when done.
func TestE2ETasksRefusedFallBackToProgressMessage(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	h.emu.RefuseTaskChunks(true)
	const answer = "It is noon."
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_t", Name: "get_current_time", Arguments: "{}"}}},
		openaitest.Response{Text: answer},
	)
	ts := h.post(general, alice, "<@U0BOT> what time is it?", "")
	h.waitFor("the progress message and the answer", func() bool {
		msgs := h.emu.BotMessages(general, ts)
		return len(msgs) == 2 && msgs[1].Text == answer
	})
	h.idle()
	msgs := h.emu.BotMessages(general, ts)
	if len(msgs) != 2 {
		t.Fatalf("%d bot messages, want the progress message and the answer", len(msgs))
	}
	if msgs[0].Text != "✓ Used get_current_time" || len(msgs[0].Tasks) != 0 {
		t.Errorf("progress message %q (tasks %+v)", msgs[0].Text, msgs[0].Tasks)
	}
	if len(msgs[1].Tasks) != 0 || msgs[1].TaskDisplayMode != "" {
		t.Errorf("the answer carries tasks %+v (mode %q) although they were refused", msgs[1].Tasks, msgs[1].TaskDisplayMode)
	}
}

// TestE2ETaskChunksRefusedMidTurn: a workspace that starts the stream but refuses a
// task chunk (an error) gets the progress message from then on; the answer still
// streams into the started message.
func TestE2ETaskChunksRefusedMidTurn(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.start()
	const answer = "It is noon."
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_t", Name: "get_current_time", Arguments: "{}"}}},
		openaitest.Response{Text: answer},
	)
	h.emu.FailNext("chat.appendStream", "invalid_chunks")
	ts := h.post(general, alice, "<@U0BOT> what time is it?", "")
	h.waitFor("the answer", func() bool {
		msgs := h.emu.BotMessages(general, ts)
		return len(msgs) == 2 && !msgs[0].Streaming && msgs[0].Text == answer
	})
	h.idle()
	msgs := h.emu.BotMessages(general, ts)
	if len(msgs) != 2 || len(msgs[0].TaskUpdates) != 0 || msgs[1].Text != "✓ Used get_current_time" {
		t.Fatalf("bot messages %q / %q (tasks %+v), want the streamed answer without tasks, then the progress message",
			msgs[0].Text, msgs[1].Text, msgs[0].TaskUpdates)
	}
}

// launchPlan answers the planner's forced phase calls for "how many days until the
// launch?": the intent, a plan of task a and task b (which depends on a), and a
// reflection that finds the request answered. ok is false for other requests.
func launchPlan(r openaitest.Request) (resp openaitest.Response, ok bool) {
	if r.Chat.ToolChoice == nil || len(r.Chat.Tools) != 1 {
		return resp, false
	}
	args := map[string]string{
		"commit_understanding": `{"intent":"days until the launch","entities":["launch"]}`,
		"commit_plan":          `{"tasks":[{"id":"a","description":"Find the launch date","depends_on":[]},{"id":"b","description":"Compute the days until the launch","depends_on":["a"]}]}`,
		"commit_reflection":    `{"answered":true,"missing":"","new_tasks":[]}`,
	}
	name := r.Chat.Tools[0].Function.Name
	a, ok := args[name]
	if !ok {
		return resp, false
	}
	return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: name, Arguments: a}}}, true
}

// registerSlowReport registers slow_report, a tool that runs until it is cancelled.
func registerSlowReport(r *agents.Registry) error {
	r.MustRegister(agents.ToolSpec{Name: "slow_report", Description: "Builds a slow report", Category: "Test",
		Parameters: json.RawMessage(`{"type":"object","properties":{}}`), Timeout: time.Minute},
		agents.ToolFunc(func(ctx context.Context, _ json.RawMessage) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}))
	return nil
}

// TestE2EKnowledgeSearchStreamedAsTask: a search_knowledge call's task names the
// document and heading it found (documents have no URL, so no URL source).
func TestE2EKnowledgeSearchStreamedAsTask(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.ingest("handbook", "leave.md", "# Leave\n\n## Parental leave\n\nEmployees get 16 weeks of paid parental leave.\n")
	h.start()
	const answer = "You get 16 weeks of paid parental leave."
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "call_k", Name: "search_knowledge", Arguments: `{"query":"parental leave"}`}}},
		openaitest.Response{Text: answer},
	)
	ts := h.post(general, alice, "<@U0BOT> how long is parental leave?", "")
	m := h.streamedTurn(t, ts, answer)
	if len(m.Tasks) != 1 {
		t.Fatalf("tasks %+v, want the search", m.Tasks)
	}
	task := m.Tasks[0]
	if task.Title != "search_knowledge parental leave" || task.Status != "complete" ||
		!strings.HasSuffix(task.Output, "leave.md — Parental leave") || len(task.Sources) != 0 {
		t.Errorf("search task %+v, want the document and heading in its output", task)
	}
}
