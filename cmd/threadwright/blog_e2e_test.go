package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/prompts"
	"github.com/threadwright/threadwright/testkit/logtest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// blogWeb is the web the blog's research finds in TestE2EBlogBriefSourcesAndFinalFields:
// a SearXNG stand-in whose every search returns two pages of a local site, one of
// which answers HTTP 500.
type blogWeb struct {
	pages, search *httptest.Server

	mu sync.Mutex
	// queries are the search engine's queries, in order.
	queries []string
}

// searched returns the queries the search engine received, in order.
func (w *blogWeb) searched() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.queries)
}

// newBlogWeb starts the site and the search engine; they close with the test.
func newBlogWeb(t *testing.T) *blogWeb {
	w := &blogWeb{}
	w.pages = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/gone" {
			http.Error(rw, "gone for good", http.StatusInternalServerError)
			return
		}
		slug := strings.TrimPrefix(r.URL.Path, "/articles/")
		rw.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(rw, `<html><head><title>Field report %[1]s</title><script>var tracking = 1;</script></head>
<body><nav>Home · About</nav><article><p>Scraped page %[1]s: teams that tag every namespace cut their cluster bill by a fifth within a quarter.</p></article></body></html>`, slug)
	}))
	t.Cleanup(w.pages.Close)
	w.search = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		q := r.URL.Query().Get("q")
		w.mu.Lock()
		w.queries = append(w.queries, q)
		w.mu.Unlock()
		slug := strings.ToLower(strings.Join(strings.Fields(q), "-"))
		if len(slug) > 40 {
			slug = slug[:40]
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(map[string]any{"results": []map[string]string{
			{"title": "Field report on " + q, "url": w.pages.URL + "/articles/" + url.PathEscape(slug), "content": "Teams that tag every namespace cut their cluster bill by a fifth."},
			{"title": "A page that is gone", "url": w.pages.URL + "/gone", "content": "Cost dashboards compared."},
		}})
	}))
	t.Cleanup(w.search.Close)
	return w
}

// demoHandler answers the fake OpenAI server's requests with the offline demo model,
// so that a test runs the demo through the real go-openai client.
func demoHandler(model *demo.Model) func(openaitest.Request) openaitest.Response {
	return func(r openaitest.Request) openaitest.Response {
		c, err := model.Complete(context.Background(), r.Chat)
		if err != nil {
			return openaitest.Response{Status: 500}
		}
		resp := openaitest.Response{Text: c.Content}
		for _, tc := range c.ToolCalls {
			resp.ToolCalls = append(resp.ToolCalls, openaitest.ToolCall{Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		return resp
	}
}

// TestE2EBlogBriefSourcesAndFinalFields runs the built-in blog on the demo model
// behind the fake OpenAI server (the real go-openai client), with web_search on a
// local SearXNG stand-in and the real fetcher on a local site:
//   - the outline's options are reviewed once against the criteria before people
//     see them;
//   - research calls web_search; the sources phase fetches every page it cites
//     (the one that fails is recorded, not fatal);
//   - the article brief is written from the outline and given, with the section's
//     fetched pages, to every section's writer;
//   - the article has every field, passes the checks made without the model (the
//     word count within ±15% of the input), says the enhancement pass was skipped
//     (no MODEL_PROFILES), and the report holds it all.
//
// With MODEL_PROFILES defining "enhance" (the demo model again, behind a second fake
// server), the article's one enhancement request goes to that server and the card
// says the article was enhanced. With it defining "large" instead, the article is
// written (and judged) there, on the profile's model, and every other step on the
// main server; without it, everything is on the main server.
func TestE2EBlogBriefSourcesAndFinalFields(t *testing.T) {
	t.Run("NoEnhanceProfile", func(t *testing.T) { testBlogBriefSourcesAndFinalFields(t, false, false) })
	t.Run("EnhanceProfile", func(t *testing.T) { testBlogBriefSourcesAndFinalFields(t, true, false) })
	t.Run("LargeProfile", func(t *testing.T) { testBlogBriefSourcesAndFinalFields(t, false, true) })
}

func testBlogBriefSourcesAndFinalFields(t *testing.T, enhance, large bool) {
	web := newBlogWeb(t)
	h := newWorkflowHarness(t)
	h.env["SEARXNG_URL"] = web.search.URL
	h.env["FETCH_ALLOW_HOSTS"] = strings.TrimPrefix(web.pages.URL, "http://")
	h.env["TOOL_TIMEOUT"] = "30s" // a loaded machine; not what this test is about
	h.ai.Handle(demoHandler(demo.New()))
	second := openaitest.NewServer()
	t.Cleanup(second.Close)
	second.Handle(demoHandler(demo.New()))
	switch {
	case enhance:
		h.env["MODEL_PROFILES"] = writeFile(t, "profiles.yaml", "enhance:\n  base_url: "+second.URL()+"\n  model: enhance-model\n")
	case large:
		h.env["MODEL_PROFILES"] = writeFile(t, "profiles.yaml", "large:\n  base_url: "+second.URL()+"\n  model: large-model\n")
	}
	logs := &logtest.Buffer{}
	h.logs = logs
	h.start()
	// The operator, not the thread, is told where the article is written.
	note := `artifact \"article\" prefers the model profile \"large\" (prefer_model), which MODEL_PROFILES does not define: it is written on the main model (OPENAI_MODEL)`
	if got := strings.Contains(logs.String(), note); got == large {
		t.Errorf("the start-up log notes the article is on the main model: %v; want %v:\n%s", got, !large, logs.String())
	}
	thread := h.startWorkflow(alice, "blog Kubernetes cost control for platform teams")

	// The outline: its options reviewed once, then chosen and approved.
	options := h.latest(thread, "A:", "")
	if m, _ := h.emu.Message(general, options); !strings.Contains(string(m.Blocks), "Reviewed against the criteria and revised once") {
		t.Errorf("the options card does not say the options were reviewed:\n%s", m.Blocks)
	}
	reviews := 0
	for _, r := range h.ai.Requests() {
		if forced(r) == "commit_artifact_options" && strings.Contains(r.LastUserMessage(), reviewSentence) {
			reviews++
		}
	}
	if reviews != 1 {
		t.Errorf("%d reviews of the outline's options; want 1", reviews)
	}
	h.click(thread, alice, "A:", "")
	planCard, _ := h.emu.Message(general, h.latest(thread, "Approve", ""))
	h.click(thread, alice, "Approve", "")
	h.waitFor("the article for review", func() bool {
		return strings.Contains(h.transcript(thread), "Meta keywords:")
	})
	if strings.Contains(h.transcript(thread), "prefer_model") || strings.Contains(h.transcript(thread), "MODEL_PROFILES") {
		t.Error("the thread names a setting: the note on the article's model is for the operator")
	}
	if strings.Contains(h.transcript(thread), "runs without web search") {
		t.Error("with a search provider, the thread says research runs without web search")
	}

	assertArticleOn(t, h.ai, second, large)
	assertApprovedQueries(t, h.ai, web, string(planCard.Blocks))
	var searched, briefs, sections, fetched, failed, judged int
	for _, r := range append(h.ai.Requests(), second.Requests()...) {
		ma := artifactRE.FindStringSubmatch(systemText(r))
		if ma == nil {
			continue
		}
		if ma[1] == "article" && forced(r) == "commit_evaluation" {
			// The model judges only the criteria without a check.
			judged++
			if ids := evaluationIDs(r); !slices.Equal(ids, []string{"fields", "tldr_matches", "cited_references", "structure"}) {
				t.Errorf("the article's evaluation asked the model about %v; want only the criteria without a check", ids)
			}
		}
		if ma[1] == "sources" {
			t.Error("the model was asked to write the sources")
		}
		text := systemText(r) + "\n" + r.LastUserMessage()
		switch {
		case ma[1] == "research" && len(r.ToolResults()) > 0 && strings.Contains(r.ToolResults()[0].Content, web.pages.URL):
			searched++
		case ma[1] == "brief" && forced(r) == "commit_artifact_final_text":
			briefs++
		case ma[1] == "sections" && forced(r) == "commit_artifact_final_text" && !strings.Contains(text, "Tighten the prose"):
			sections++
			if !strings.Contains(text, "Words per section") {
				t.Errorf("a section was written without the brief:\n%s", text)
			}
			if strings.Contains(text, "Source: "+web.pages.URL+"/articles/") && strings.Contains(text, "cut their cluster bill by a fifth within a quarter") {
				fetched++
			}
			if strings.Contains(text, "Source: "+web.pages.URL+"/gone") && strings.Contains(text, "Not fetched:") {
				failed++
			}
			if strings.Contains(text, "tracking") || strings.Contains(text, "Home · About") {
				t.Errorf("a fetched page kept its script or navigation:\n%s", text)
			}
		}
	}
	if judged == 0 {
		t.Error("the model never evaluated the article")
	}
	if searched < 5 || briefs != 1 || sections != 5 || fetched != 5 || failed != 5 {
		t.Errorf("research writes that saw search results %d (want ≥ 5), briefs %d (want 1), section writes %d (want 5), with fetched pages %d (want 5), with the failed fetch recorded %d (want 5)",
			searched, briefs, sections, fetched, failed)
	}
	tr := h.transcript(thread)
	// (the transcript keeps the blocks' JSON escapes)
	passLine := `The final polish did not run this time; the text is as first written.`
	wantEnhanced := 0
	if enhance {
		passLine, wantEnhanced = `Polished in a second pass.`, 1
	}
	var enhanced int
	for _, r := range second.Requests() {
		if ma := artifactRE.FindStringSubmatch(systemText(r)); ma != nil && ma[1] == "article" && r.Chat.Model == "enhance-model" {
			enhanced++
		}
	}
	if n := len(second.Requests()); !large && (enhanced != wantEnhanced || n != wantEnhanced) {
		t.Errorf("%d requests to the enhancement profile, %d of them the article's on enhance-model; want %d", n, enhanced, wantEnhanced)
	}
	for _, want := range []string{
		"pipeline finished in",
		passLine,
		"⚖️ *Verdict:* ✅ pass",
		// The words check, run by the engine, on the article's card.
		"words; the target is 1,500 ± 15% (1,275–1,725)",
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("the thread lacks %q:\n%s", want, tr)
		}
	}

	h.click(thread, alice, "Approve", "")
	report := h.file("blog.md")
	if !strings.HasPrefix(report, "# ") {
		t.Errorf("the report does not start with the title:\n%s", report)
	}
	for _, want := range []string{"Meta description:", "Meta keywords:", "Image description:", "## Table of contents", "## TL;DR", "## Conclusion", "## References", web.pages.URL + "/articles/"} {
		if !strings.Contains(report, want) {
			t.Errorf("the report lacks %q:\n%s", want, report)
		}
	}
	// The checks, as the engine ran them, on the report: every field there, the body
	// within ±15% of the default 1,500 words.
	defs, err := workflow.Load(prompts.Workflows, "workflows", workflow.BuiltinPrefix)
	if err != nil {
		t.Fatal(err)
	}
	var article *workflow.Artifact
	for _, d := range defs {
		if d.Name == "blog" {
			article, _ = d.Artifact("article")
		}
	}
	for _, r := range workflow.RunChecks(article, report, workflow.CheckEnv{Inputs: map[string]string{"wordcount": "1500"}}) {
		if !r.Pass {
			t.Errorf("the report fails the check %s: %+v", r.ID, r)
		}
	}
	assertNoSlackErrors(t, h.harness)
}

// assertArticleOn checks where the blog's model calls went: with large, the article's
// write (and every other call about the article) to second, on the profile's model
// "large-model", and every call about another artifact to main; without it, no call
// to second is about writing the article, and the article is written on main.
func assertArticleOn(t *testing.T, main, second *openaitest.Server, large bool) {
	t.Helper()
	writes := map[*openaitest.Server]int{}
	for _, srv := range []*openaitest.Server{main, second} {
		for _, r := range srv.Requests() {
			ma := artifactRE.FindStringSubmatch(systemText(r))
			if ma == nil {
				continue
			}
			onSecond := srv == second
			switch {
			case ma[1] != "article" && onSecond:
				t.Errorf("a call about %q went to the large profile's server", ma[1])
			case ma[1] == "article" && large && !onSecond:
				t.Errorf("a call about the article (%s) went to the main server, with the large profile defined", forced(r))
			case ma[1] == "article" && large && r.Chat.Model != "large-model":
				t.Errorf("the article's call ran on model %q; want large-model", r.Chat.Model)
			}
			if ma[1] == "article" && forced(r) == "commit_artifact_final_text" && !strings.Contains(r.LastUserMessage(), "Improve the article's readability") {
				writes[srv]++
			}
		}
	}
	want, other := main, second
	if large {
		want, other = second, main
	}
	if writes[want] == 0 || writes[other] != 0 {
		t.Errorf("article writes: %d on the server that should write it, %d on the other; want ≥ 1 and 0", writes[want], writes[other])
	}
}

// assertApprovedQueries checks the blog's plan against its research: the outline card
// people approved shows every section's key points and search queries; each
// section's research starts from that section's queries, run with web_search before
// the model is called (its first request already holds those calls and their
// results, and its prompt says they were run); and the search engine received every
// one of them.
func assertApprovedQueries(t *testing.T, ai *openaitest.Server, web *blogWeb, planCard string) {
	t.Helper()
	if !strings.Contains(planCard, "Key points:") || !strings.Contains(planCard, "Search queries:") {
		t.Errorf("the outline card shows no key points or search queries:\n%s", planCard)
	}
	first := map[string]openaitest.Request{} // each research item's first request
	itemRE := regexp.MustCompile(`Item (\d+) of \d+: (.+)`)
	for _, r := range ai.Requests() {
		ma := artifactRE.FindStringSubmatch(systemText(r))
		mi := itemRE.FindStringSubmatch(r.LastUserMessage())
		if ma == nil || ma[1] != "research" || mi == nil || !slices.ContainsFunc(r.Chat.Tools, func(tl openai.Tool) bool { return tl.Function.Name == "web_search" }) {
			continue // not a research write (the recovery agent's request, say)
		}
		if f, ok := first[mi[2]]; !ok || len(r.Chat.Messages) < len(f.Chat.Messages) {
			first[mi[2]] = r
		}
	}
	if len(first) != 5 {
		t.Errorf("%d research items; want 5", len(first))
	}
	searched := web.searched()
	for title, r := range first {
		var queries []string
		for _, m := range r.Chat.Messages {
			for _, tc := range m.ToolCalls {
				var args struct{ Query string }
				if tc.Function.Name == "web_search" && json.Unmarshal([]byte(tc.Function.Arguments), &args) == nil {
					queries = append(queries, args.Query)
				}
			}
		}
		if len(queries) < 2 {
			t.Errorf("research of %q began with web searches %q; want the section's 2 or more approved queries", title, queries)
			continue
		}
		at := strings.Index(planCard, title)
		if at < 0 {
			t.Errorf("the outline card lacks the section %q", title)
			continue
		}
		// The section on the card: its heading up to a little after its queries' label.
		section := planCard[at:]
		if i := strings.Index(section, "Search queries:"); i >= 0 {
			section = section[:min(len(section), i+600)]
		}
		for _, q := range queries {
			if !strings.Contains(section, q) || !strings.Contains(r.LastUserMessage(), "- "+q) {
				t.Errorf("research of %q searched %q, which its outline section on the card or its prompt does not list", title, q)
			}
			if !slices.Contains(searched, q) {
				t.Errorf("the search engine never received the approved query %q", q)
			}
		}
		if !strings.Contains(r.LastUserMessage(), "they have been run for you") {
			t.Errorf("research of %q is not told its approved queries were run:\n%s", title, r.LastUserMessage())
		}
	}
}
