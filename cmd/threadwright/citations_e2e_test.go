package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// lastBotText waits until the bot is idle and returns the text of its last message in
// the thread of ts.
func (h *harness) lastBotText(channel, ts string) string {
	h.t.Helper()
	h.idle()
	msgs := h.emu.BotMessages(channel, ts)
	if len(msgs) == 0 {
		h.t.Fatal("no bot message in the thread")
	}
	return msgs[len(msgs)-1].Text
}

// TestE2ECitedKnowledgeAnswer: after `threadwright ingest` of a document, a streamed
// knowledge answer ends with its numbered source naming the document and heading;
// the marker [7], which names no passage, is removed, and the streamed text is
// replaced by the cited reply.
func TestE2ECitedKnowledgeAnswer(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["STREAM_ANSWERS"] = "true"
	h.ingest("handbook", "leave.md", "# Leave\n\n## Parental leave\n\nEmployees get 16 weeks of paid parental leave.\n")
	h.start()
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		if len(r.ToolResults()) > 0 {
			return openaitest.Response{Text: "You get **16 weeks** of paid parental leave [1] [7]."}
		}
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "search_knowledge", Arguments: `{"query":"parental leave"}`}}}
	})
	ts := h.post(general, alice, "<@U0BOT> how long is parental leave?", "")
	h.replies(general, ts, 1)
	got := h.lastBotText(general, ts)
	if !strings.HasPrefix(got, "You get *16 weeks* of paid parental leave [1].") ||
		!strings.Contains(got, "\n\n*Sources*\n[1] ") {
		t.Fatalf("answer %q; want the marker kept, [7] removed and a Sources list", got)
	}
	if !strings.HasSuffix(got, "handbook/leave.md — Parental leave") || strings.Contains(got, "[7]") || strings.Contains(got, "[2]") {
		t.Fatalf("answer %q; want it to end with the one source, document and heading", got)
	}
}

// TestE2ECitedWebAnswer: the model reads a local page with fetch_url; the answer ends
// with the page's title and URL, and a special mention in the page's title stays
// defused.
func TestE2ECitedWebAnswer(t *testing.T) {
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><head><title>Release notes <!channel></title></head><body><p>Version 2 ships in May.</p></body></html>")
	}))
	defer page.Close()
	h := newHarness(t, emulator.Config{})
	h.env["FETCH_ALLOW_PRIVATE"] = "true"
	h.start()
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "f", Name: "fetch_url", Arguments: fmt.Sprintf(`{"url":%q}`, page.URL+"/notes")}}},
		openaitest.Response{Text: "Version 2 ships in May."},
	)
	ts := h.post(general, alice, "<@U0BOT> when does version 2 ship? "+page.URL+"/notes", "")
	h.replies(general, ts, 1)
	got := h.lastBotText(general, ts)
	want := "Version 2 ships in May.\n\n*Sources*\n[1] <" + page.URL + "/notes|Release notes &lt;!channel&gt;>"
	if got != want {
		t.Fatalf("answer\n%q\nwant\n%q", got, want)
	}
}

// TestE2EUncitedKnowledgeAnswerListsRetrieved: the model answers from
// oncall-handbook.md through search_knowledge but writes no [n] marker; the answer
// still names the document and heading, under a heading that says they were
// retrieved, not cited, and lists no cited source.
func TestE2EUncitedKnowledgeAnswerListsRetrieved(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.ingest("handbook", "oncall-handbook.md", "# On-call\n\n## Paging\n\nIf the primary does not acknowledge within 15 minutes, page the secondary.\n")
	h.start()
	h.ai.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{{ID: "k", Name: "search_knowledge", Arguments: `{"query":"page secondary"}`}}},
		openaitest.Response{Text: "Page the secondary when the primary has not acknowledged within 15 minutes."},
	)
	ts := h.post(general, alice, "<@U0BOT> when do I page the secondary?", "")
	h.replies(general, ts, 1)
	got := h.lastBotText(general, ts)
	// The document is named by the path ingest read it from.
	head := "Page the secondary when the primary has not acknowledged within 15 minutes.\n\n" +
		"*Sources — retrieved, not cited*\n• "
	if !strings.HasPrefix(got, head) || !strings.HasSuffix(got, "/handbook/oncall-handbook.md — Paging") ||
		strings.Count(got, "\n") != 3 || strings.Contains(got, "[1]") {
		t.Fatalf("answer\n%q\nwant the answer, then the one retrieved document and heading, not cited", got)
	}
}
