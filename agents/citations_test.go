package agents_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/sqlite"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// TestCitedKnowledgeAndWebAnswers runs the executor with the real go-openai client
// against openaitest, search_knowledge on a real SQLite knowledge base and fetch_url
// on a local page, and checks the reply the Synthesizer makes: the cited passage and
// page listed, numbered, and the marker with no source gone.
func TestCitedKnowledgeAndWebAnswers(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "threadwright.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.ReplaceSource(ctx, "docs/handbook/leave.md", "h1", conversation.Origin{}, []conversation.Chunk{
		{Heading: "Parental leave", Text: "Employees get sixteen weeks of paid parental leave."},
	}); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/policy", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, "<html><head><title>Leave policy</title></head><body><p>Sixteen weeks.</p></body></html>")
	})
	site := httptest.NewServer(mux)
	defer site.Close()

	srv := openaitest.NewServer()
	defer srv.Close()
	exec := newExecutor(t, srv, nil, func(c *agents.ExecutorConfig) {
		c.Registry.MustRegister(toolbox.KnowledgeTool(st, 5))
		c.Registry.MustRegister(web.FetchURLTool(web.FetchConfig{AllowPrivate: true}))
	})
	srv.Push(
		openaitest.Response{ToolCalls: []openaitest.ToolCall{
			{ID: "k", Name: "search_knowledge", Arguments: `{"query":"parental leave weeks"}`},
			{ID: "f", Name: "fetch_url", Arguments: `{"url":"` + site.URL + `/policy"}`},
		}},
		openaitest.Response{Text: "You get **sixteen weeks** [1] [7]."},
	)
	f, err := exec.Execute(ctx, prompt("How long is parental leave?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(fmt.Sprint(reqs[1].Chat.Messages), "[1] docs/handbook/leave.md — Parental leave") {
		t.Fatalf("the model did not get the numbered passage: %d requests", len(reqs))
	}
	synth := agents.NewSynthesizer()
	reply, err := synth.Synthesize(ctx, prompt(""), f)
	if err != nil {
		t.Fatal(err)
	}
	want := "You get *sixteen weeks* [1].\n\n*Sources*\n[1] docs/handbook/leave.md — Parental leave\n[2] <" + site.URL + "/policy|Leave policy>"
	if reply != want {
		t.Errorf("reply\n%s\nwant\n%s", reply, want)
	}
	md, edited := synth.EditAnswer(prompt(""), f)
	wantMD := "You get **sixteen weeks** [1].\n\n**Sources**  \n[1] docs/handbook/leave.md — Parental leave  \n[2] [Leave policy](" + site.URL + "/policy)"
	if !edited || md != wantMD {
		t.Errorf("EditAnswer = %q, %v; want\n%s\n(a streamed answer is completed with its sources)", md, edited, wantMD)
	}
	if _, edited := synth.EditAnswer(prompt(""), conversation.Findings{Answer: "plain"}); edited {
		t.Error("EditAnswer edited an answer without sources")
	}
}

// TestSynthesizeListsRetrievedSources: an answer without markers lists what its
// knowledge search returned as retrieved, not cited, in the request's language, in
// the reply and in the streamed answer's Markdown.
func TestSynthesizeListsRetrievedSources(t *testing.T) {
	f := conversation.Findings{Answer: "Page the secondary after 15 minutes.", ToolCalls: []conversation.ToolCall{{
		Name:   "search_knowledge",
		Result: "Found 1 passage in the knowledge base for \"paging\":\n\n[1] oncall-handbook.md — Paging\nPage the secondary after 15 minutes.\n\nCite.",
	}}}
	synth := agents.NewSynthesizer()
	for _, tt := range []struct{ question, reply, md string }{
		{"Who do I page?",
			"Page the secondary after 15 minutes.\n\n*Sources — retrieved, not cited*\n• oncall-handbook.md — Paging",
			"Page the secondary after 15 minutes.\n\n**Sources — retrieved, not cited**  \n• oncall-handbook.md — Paging"},
		{"Кого вызывать ночью?",
			"Page the secondary after 15 minutes.\n\n*Источники — найдены, но не процитированы*\n• oncall-handbook.md — Paging",
			"Page the secondary after 15 minutes.\n\n**Источники — найдены, но не процитированы**  \n• oncall-handbook.md — Paging"},
	} {
		reply, err := synth.Synthesize(context.Background(), prompt(tt.question), f)
		if err != nil || reply != tt.reply {
			t.Errorf("Synthesize(%q) = %q, %v; want %q", tt.question, reply, err, tt.reply)
		}
		if md, edited := synth.EditAnswer(prompt(tt.question), f); !edited || md != tt.md {
			t.Errorf("EditAnswer(%q) = %q, %v; want %q", tt.question, md, edited, tt.md)
		}
	}
}
