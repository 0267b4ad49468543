package main

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestE2ERetryAnswerAfterAModelFailure: the model answers HTTP 503 past its retries,
// so the answer's failure message says the model did not answer and offers Retry;
// the model recovers, Retry answers the same message once, below the failure, from
// the history without the failed exchange; the Retry of the failure it answered, and
// a second click on it, are refused and run nothing.
func TestE2ERetryAnswerAfterAModelFailure(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["MODEL_MAX_RETRIES"] = "1"
	model := &outage{down: true}
	h.ai.Handle(model.handler(nil, openaitest.Response{Status: http.StatusServiceUnavailable}, replies("**Paris** is the capital of France.")))
	h.start()
	question := "what is the capital of France?"
	thread := h.post(general, alice, "<@U0BOT> "+question, "")
	failed := h.latest(thread, "Retry", "")
	tr := h.transcript(thread)
	for _, want := range []string{"The model did not answer (HTTP 503).", "Retry answers this message again."} {
		if !strings.Contains(tr, want) {
			t.Fatalf("the failure message lacks %q:\n%s", want, tr)
		}
	}
	if strings.Contains(tr, "Paris") || strings.Contains(tr, "status code") {
		t.Fatalf("the failure message shows an answer or the raw error:\n%s", tr)
	}
	before := model.set(false)
	if before != 2 {
		t.Errorf("%d model calls before Retry, want 2 (1 + MODEL_MAX_RETRIES)", before)
	}
	retry := *h.find(failed, "Retry", "")

	h.click(thread, alice, "Retry", "")
	h.waitFor("the answer", func() bool { return strings.Contains(h.transcript(thread), "*Paris* is the capital of France.") })
	if calls := model.count(); calls != before+1 {
		t.Errorf("Retry made %d model calls, want 1", calls-before)
	}
	msgs := h.emu.BotMessages(general, thread)
	last := msgs[len(msgs)-1]
	if n := strings.Count(h.transcript(thread), "Paris"); n != 1 || !strings.Contains(last.Text, "Paris") {
		t.Fatalf("the answer shown %d times, or not last:\n%s", n, h.transcript(thread))
	}
	if m, _ := h.emu.Message(general, failed); !strings.Contains(m.Text, "Retried by <@"+alice+">") || h.find(failed, "Retry", "") != nil {
		t.Errorf("the failure message was not closed: %q", m.Text)
	}
	reqs := h.ai.Requests()
	if got := reqs[len(reqs)-1]; got.LastUserMessage() != question || strings.Count(string(got.Body), question) != 1 {
		t.Errorf("Retry's request asks %q, with the question %d times in it: %s", got.LastUserMessage(), strings.Count(string(got.Body), question), got.Body)
	}

	// The Retry clicked again (a double click, or an old client): refused, nothing runs.
	env, err := h.emu.ClickOld(general, failed, alice, retry)
	if err != nil {
		t.Fatal(err)
	}
	h.settleEnvelope(env)
	h.waitEphemeral(general, alice, "That Retry is no longer available")
	if calls := model.count(); calls != before+1 {
		t.Errorf("an old Retry made %d more model calls", calls-before-1)
	}
	if got := len(h.emu.BotMessages(general, thread)); got != len(msgs) {
		t.Errorf("an old Retry posted: %d messages, want %d:\n%s", got, len(msgs), h.transcript(thread))
	}
}

// TestE2ERetryAnswerRefusedAfterANewerTurn: a failed answer's Retry, clicked after a
// newer message was answered in the thread, is no longer available.
func TestE2ERetryAnswerRefusedAfterANewerTurn(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["MODEL_MAX_RETRIES"] = "0"
	model := &outage{down: true}
	h.ai.Handle(model.handler(nil, openaitest.Response{Status: http.StatusBadGateway}, func(r openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: "An answer to: " + r.LastUserMessage()}
	}))
	h.start()
	thread := h.post(general, alice, "<@U0BOT> first question", "")
	failed := h.latest(thread, "Retry", "")
	if tr := h.transcript(thread); !strings.Contains(tr, "The model did not answer (HTTP 502).") {
		t.Fatalf("the failure message does not name the model:\n%s", tr)
	}
	model.set(false)
	h.post(general, alice, "second question", thread)
	h.waitFor("the second answer", func() bool { return strings.Contains(h.transcript(thread), "An answer to: second question") })
	before := model.count()
	n := len(h.emu.BotMessages(general, thread))
	env, err := h.emu.ClickButtonByLabel(general, failed, alice, "Retry")
	if err != nil {
		t.Fatal(err)
	}
	h.settleEnvelope(env)
	h.waitEphemeral(general, alice, "That Retry is no longer available")
	if calls := model.count(); calls != before || len(h.emu.BotMessages(general, thread)) != n {
		t.Fatalf("an out-of-date Retry ran: %d model calls, %d messages (want %d, %d)", calls, len(h.emu.BotMessages(general, thread)), before, n)
	}
}

// TestE2ERetryFailedPipelineItems: a research item fails because the tool it needs
// fails (fetch_url refuses the address), every try; the research card names the tool
// and offers Retry failed items, which runs that item alone again once the tool's
// trouble is gone: the items that were written are not written again.
func TestE2ERetryFailedPipelineItems(t *testing.T) {
	h := newBlogHarness(t)
	var mu sync.Mutex
	toolDown := true
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		mi := itemRE.FindStringSubmatch(r.LastUserMessage())
		ma := artifactRE.FindStringSubmatch(systemText(r))
		mu.Lock()
		down := toolDown
		mu.Unlock()
		if down && ma != nil && ma[1] == "research" && mi != nil && strings.TrimSpace(mi[3]) == "Section 3" && forced(r) == "commit_artifact_final_text" {
			if len(r.ToolResults()) == 0 && offered(r, "fetch_url") {
				return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "fetch_url", Arguments: `{"url":"http://127.0.0.1:9/section-3"}`}}}
			}
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "commit_artifact_final_text",
				Arguments: `{"text":"","failure":"the only source for Section 3 could not be read"}`}}}
		}
		return h.blog.respond(r)
	})
	h.start()
	thread := h.toPipeline()
	h.waitFor("the article for review", func() bool {
		return strings.Contains(h.transcript(thread), "Meta description: How small teams")
	})
	tr := h.transcript(thread)
	for _, want := range []string{
		"3 of 4 items written · 1 failed: Section 3",
		"failed after 3 tries: The tool `fetch_url` failed. the only source for Section 3 could not be read",
	} {
		if !strings.Contains(tr, want) {
			t.Fatalf("thread lacks %q:\n%s", want, tr)
		}
	}
	written := map[string]int{}
	for i := 1; i <= 4; i++ {
		s := fmt.Sprintf("Section %d", i)
		written[s] = requests(h.harness, "commit_artifact_final_text", "research", s)
	}
	mu.Lock()
	toolDown = false
	mu.Unlock()
	card := h.latest(thread, "Retry failed items", "")
	old := *h.find(card, "Retry failed items", "")
	h.click(thread, alice, "Retry failed items", "")
	h.waitFor("research with every item", func() bool {
		return strings.Contains(h.transcript(thread), "4 of 4 items written")
	})
	for s, n := range written {
		got := requests(h.harness, "commit_artifact_final_text", "research", s)
		want := n
		if s == "Section 3" {
			want = n + 1
		}
		if got != want {
			t.Errorf("%s written %d times in all, want %d (only the failed item runs again)", s, got, want)
		}
	}
	if m, _ := h.emu.Message(general, card); strings.Contains(string(m.Blocks), "Retry failed items") {
		t.Errorf("the old research card keeps its Retry: %s", m.Blocks)
	}
	h.idle()
	// The old card's Retry, clicked again, is refused.
	env, err := h.emu.ClickOld(general, card, alice, old)
	if err != nil {
		t.Fatal(err)
	}
	h.settleEnvelope(env)
	h.waitEphemeral(general, alice, "That Retry is no longer available")
	if got := requests(h.harness, "commit_artifact_final_text", "research", "Section 3"); got != written["Section 3"]+1 {
		t.Errorf("an old Retry wrote Section 3 again: %d writes", got)
	}
}

// TestE2ERetryAnswerSlackRefused: Slack refuses the answer (chat.postMessage
// ok:false), so its failure message names Slack and its error code, and Retry
// answers again.
func TestE2ERetryAnswerSlackRefused(t *testing.T) {
	h := newWorkflowHarness(t)
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		return openaitest.Response{Text: "The answer."}
	})
	h.start()
	h.emu.FailNext("chat.postMessage", "internal_error")
	thread := h.post(general, alice, "<@U0BOT> a question", "")
	h.latest(thread, "Retry", "")
	if tr := h.transcript(thread); !strings.Contains(tr, "Slack refused the message or file (internal_error). Retry answers this message again.") || strings.Contains(tr, "The answer.") {
		t.Fatalf("the failure message does not name Slack's refusal:\n%s", tr)
	}
	h.click(thread, alice, "Retry", "")
	h.waitFor("the answer", func() bool { return strings.Contains(h.transcript(thread), "The answer.") })
	if n := len(h.ai.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2 (the answer Slack refused, then Retry's)", n)
	}
}

// TestE2ERetryAnswerAfterARestart: a failed answer's Retry is kept in the checkpoint,
// so a new process on the same store (another replica, or this one restarted) runs it.
func TestE2ERetryAnswerAfterARestart(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testRetryAfterRestart(t, "") })
	t.Run("Postgres", func(t *testing.T) { testRetryAfterRestart(t, storetest.PostgresDSN(t)) })
}

func testRetryAfterRestart(t *testing.T, databaseURL string) {
	h := newWorkflowHarness(t)
	h.env["DATABASE_URL"] = databaseURL
	h.env["MODEL_MAX_RETRIES"] = "0"
	model := &outage{down: true}
	h.ai.Handle(model.handler(nil, openaitest.Response{Status: http.StatusServiceUnavailable}, replies("Answered after the restart.")))
	h.start()
	thread := h.post(general, alice, "<@U0BOT> a question before the restart", "")
	h.latest(thread, "Retry", "")
	h.stop()
	model.set(false)
	h.start()
	h.click(thread, alice, "Retry", "")
	h.waitFor("the answer", func() bool { return strings.Contains(h.transcript(thread), "Answered after the restart.") })
	if n := strings.Count(h.transcript(thread), "Answered after the restart."); n != 1 {
		t.Fatalf("the answer shown %d times:\n%s", n, h.transcript(thread))
	}
}

// TestE2ERetryAnswerInRussian: a question in Russian gets its failure message, and
// its Retry button, in Russian.
func TestE2ERetryAnswerInRussian(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["MODEL_MAX_RETRIES"] = "0"
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		return openaitest.Response{Status: http.StatusServiceUnavailable}
	})
	h.start()
	thread := h.post(general, alice, "<@U0BOT> какая столица Франции?", "")
	h.latest(thread, "Повторить", "")
	if tr := h.transcript(thread); !strings.Contains(tr, "Модель не ответила (HTTP 503). «Повторить» ответит на это сообщение снова.") {
		t.Fatalf("the failure message is not in Russian:\n%s", tr)
	}
}

// TestE2ERetryStreamedAnswer: the model streams part of an answer, then its stream
// ends with an error; the streamed part gives way to the failure message with Retry
// (no half answer stays in the thread), and Retry streams the whole answer once,
// below the closed failure message.
func TestE2ERetryStreamedAnswer(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["STREAM_ANSWERS"] = "true"
	h.env["MODEL_MAX_RETRIES"] = "0"
	chunk := func(content string) string {
		return `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":` + fmt.Sprintf("%q", content) + `},"finish_reason":null}]}` + "\n\n"
	}
	broken := []byte(chunk("") + chunk("The half") + chunk(" answer that") + chunk(" breaks off") +
		`data: {"error":{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}}` + "\n\n")
	model := &outage{down: true}
	h.ai.Handle(model.handler(nil, openaitest.Response{RawSSE: broken}, replies("**Paris** is the capital of France.")))
	h.start()
	thread := h.post(general, alice, "<@U0BOT> what is the capital of France?", "")
	failed := h.latest(thread, "Retry", "")
	h.waitFor("no message streaming", func() bool {
		for _, m := range h.emu.BotMessages(general, thread) {
			if m.Streaming {
				return false
			}
		}
		return true
	})
	if tr := h.transcript(thread); strings.Contains(tr, "half answer") || !strings.Contains(tr, "Retry answers this message again.") {
		t.Fatalf("after the failure, the thread reads:\n%s", tr)
	}
	model.set(false)
	h.click(thread, alice, "Retry", "")
	// A streamed answer's text is the message's Markdown (chat.appendStream).
	answered := func(m emulator.Message) bool { return strings.Contains(m.Text, "**Paris** is the capital of France.") }
	h.waitFor("the answer, streamed to its end", func() bool {
		msgs := h.emu.BotMessages(general, thread)
		last := msgs[len(msgs)-1]
		return answered(last) && !last.Streaming
	})
	h.idle()
	msgs := h.emu.BotMessages(general, thread)
	n := 0
	for _, m := range msgs {
		if answered(m) {
			n++
		}
		if strings.Contains(m.Text, "half answer") || m.Streaming {
			t.Errorf("a half answer, or a message still streaming, in the thread: %+v", m)
		}
	}
	if n != 1 || !answered(msgs[len(msgs)-1]) {
		t.Fatalf("the answer shown %d times, or not last:\n%s", n, h.transcript(thread))
	}
	if n := len(h.ai.Requests()); n != 2 {
		t.Errorf("%d model calls, want 2 (the broken stream, then Retry's)", n)
	}
	if m, _ := h.emu.Message(general, failed); !strings.Contains(m.Text, "Retried by <@"+alice+">") || h.find(failed, "Retry", "") != nil {
		t.Errorf("the failure message was not closed: %q", m.Text)
	}
}

// TestE2ERetryStepAfterThePipeline: the pipeline ends, and the article it leads to
// cannot be written (the model is down); the failure names the model and offers
// Retry, which writes the article once the model is back.
func TestE2ERetryStepAfterThePipeline(t *testing.T) {
	h := newBlogHarness(t)
	h.env["MODEL_MAX_RETRIES"] = "0"
	articleWrites := func(r openaitest.Request) bool {
		ma := artifactRE.FindStringSubmatch(systemText(r))
		return ma != nil && ma[1] == "article" && forced(r) == "commit_artifact_final_text"
	}
	model := &outage{down: true}
	h.ai.Handle(model.handler(articleWrites, openaitest.Response{Status: http.StatusServiceUnavailable}, h.blog.respond))
	h.start()
	thread := h.toPipeline()
	h.latest(thread, "Retry", "")
	if tr := h.transcript(thread); !strings.Contains(tr, "The model did not answer (HTTP 503). Retry runs this step again.") {
		t.Fatalf("the article's failure does not offer Retry:\n%s", tr)
	}
	model.set(false)
	h.click(thread, alice, "Retry", "")
	h.waitFor("the article for review", func() bool {
		return strings.Contains(h.transcript(thread), "Meta description: How small teams")
	})
}

// TestE2ERetryCardRefused: the model fails and Slack refuses the failure message
// with its Retry button too; the plain message posted in its place does not promise a
// Retry it does not have.
func TestE2ERetryCardRefused(t *testing.T) {
	h := newWorkflowHarness(t)
	h.env["MODEL_MAX_RETRIES"] = "0"
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		return openaitest.Response{Status: http.StatusServiceUnavailable}
	})
	h.start()
	h.emu.FailNext("chat.postMessage", "internal_error")
	thread := h.post(general, alice, "<@U0BOT> a question", "")
	h.waitFor("the failure message", func() bool {
		for _, m := range h.emu.BotMessages(general, thread) {
			if strings.Contains(m.Text, "The model did not answer (HTTP 503).") {
				return true
			}
		}
		return false
	})
	h.idle()
	for _, m := range h.emu.BotMessages(general, thread) {
		if strings.Contains(m.Text, "Retry") && h.find(m.TS, "Retry", "") == nil {
			t.Fatalf("a failure message promises a Retry it has no button for: %q", m.Text)
		}
	}
}

// outage switches the fake model's failures in the Retry tests: while it is down, the
// requests it matches are answered with its failure. It counts the matched requests.
type outage struct {
	mu    sync.Mutex
	down  bool
	calls int
}

// handler answers a request that match accepts (nil: every request) with fail while
// o is down, and every other request, and all once o is up, with next. The matched
// requests are counted either way.
func (o *outage) handler(match func(openaitest.Request) bool, fail openaitest.Response, next func(openaitest.Request) openaitest.Response) func(openaitest.Request) openaitest.Response {
	return func(r openaitest.Request) openaitest.Response {
		if match == nil || match(r) {
			o.mu.Lock()
			o.calls++
			down := o.down
			o.mu.Unlock()
			if down {
				return fail
			}
		}
		return next(r)
	}
}

// set takes o down or up and returns the requests it has matched so far.
func (o *outage) set(down bool) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.down = down
	return o.calls
}

// count returns the requests o has matched so far.
func (o *outage) count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.calls
}

// onlyTool matches a request that offers the one function name: a workflow task.
func onlyTool(name string) func(openaitest.Request) bool {
	return func(r openaitest.Request) bool {
		return len(r.Chat.Tools) == 1 && r.Chat.Tools[0].Function != nil && r.Chat.Tools[0].Function.Name == name
	}
}

// replies answers every request with text.
func replies(text string) func(openaitest.Request) openaitest.Response {
	return func(openaitest.Request) openaitest.Response { return openaitest.Response{Text: text} }
}
