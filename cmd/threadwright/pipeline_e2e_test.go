package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/store"
	"github.com/threadwright/threadwright/store/storetest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// blogModel answers the blog pipeline's model calls from the request alone: the
// artifact from the system prompt, the item from its "Item N of M: title" line.
// Research of the sections in fail fails (the model reports failure) that many times.
type blogModel struct {
	mu       sync.Mutex
	sections int            // outline sections (default 4)
	fail     map[string]int // section title → research tries that fail
	tries    map[string]int // "artifact/section" → writes so far
	delay    time.Duration  // every call's latency
	// slow, when set, limits delay to the calls for that artifact.
	slow string
	// searchKnowledge makes research call search_knowledge first and cite what it
	// returned.
	searchKnowledge bool
}

var (
	artifactRE = regexp.MustCompile("## The artifact now: .*? \\(`([a-z0-9_]+)`\\)")
	itemRE     = regexp.MustCompile(`Item (\d+) of (\d+): (.+)`)
)

func newBlogModel() *blogModel {
	return &blogModel{sections: 4, fail: map[string]int{}, tries: map[string]int{}}
}

// forced returns the function the request must call: the one tool_choice names, or
// the commit function when tool_choice is "required" (a write with tools).
func forced(r openaitest.Request) string {
	raw, _ := json.Marshal(r.Chat.ToolChoice)
	var choice struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &choice) == nil && choice.Function.Name != "" {
		return choice.Function.Name
	}
	for _, t := range r.Chat.Tools {
		if t.Function != nil && strings.HasPrefix(t.Function.Name, "commit_") {
			return t.Function.Name
		}
	}
	return ""
}

// offered reports whether the request offers the tool name.
func offered(r openaitest.Request, name string) bool {
	for _, t := range r.Chat.Tools {
		if t.Function != nil && t.Function.Name == name {
			return true
		}
	}
	return false
}

func systemText(r openaitest.Request) string {
	for _, m := range r.Chat.Messages {
		if m.Role == "system" {
			return m.Content
		}
	}
	return ""
}

func (m *blogModel) respond(r openaitest.Request) openaitest.Response {
	resp := m.answer(r)
	m.mu.Lock()
	if ma := artifactRE.FindStringSubmatch(systemText(r)); m.slow == "" || ma != nil && ma[1] == m.slow {
		resp.Delay = m.delay
	}
	m.mu.Unlock()
	return resp
}

func (m *blogModel) answer(r openaitest.Request) openaitest.Response {
	fn := forced(r)
	if fn == "" {
		return openaitest.Response{Text: "An assistant answer."}
	}
	call := func(args any) openaitest.Response {
		b, _ := json.Marshal(args)
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: fn, Arguments: string(b)}}}
	}
	task := r.LastUserMessage()
	artifact := ""
	if ma := artifactRE.FindStringSubmatch(systemText(r)); ma != nil {
		artifact = ma[1]
	}
	section := ""
	if mi := itemRE.FindStringSubmatch(task); mi != nil {
		section = strings.TrimSpace(mi[3])
	}
	if m.searchKnowledge && artifact == "research" && offered(r, "search_knowledge") {
		if results := r.ToolResults(); len(results) == 0 {
			args, _ := json.Marshal(map[string]string{"query": "async stand-ups " + section})
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "search_knowledge", Arguments: string(args)}}}
		} else {
			return call(map[string]any{"text": "Notes on " + section + " from the knowledge base [1].\n\n[1] " + sourceOf(results[0].Content)})
		}
	}
	switch fn {
	case "commit_artifact_options":
		var opts []map[string]string
		for _, l := range []string{"A", "B", "C"} {
			opts = append(opts, map[string]string{"label": l, "title": "Angle " + l, "text": "An outline angle " + l + "."})
		}
		return call(map[string]any{"options": opts})
	case "commit_artifact_selection":
		return call(map[string]any{"label": "", "instructions": "", "regenerate": false})
	case "commit_evaluation":
		raw, _ := json.Marshal(r.Chat.Tools[0].Function.Parameters)
		var ids []string
		for _, id := range regexp.MustCompile(`"enum":\[([^\]]*)\]`).FindAllStringSubmatch(string(raw), -1) {
			for _, q := range strings.Split(id[1], ",") {
				ids = append(ids, strings.Trim(q, `"`))
			}
		}
		var results []map[string]any
		for _, id := range ids {
			results = append(results, map[string]any{"id": id, "pass": true, "reason": "Meets it."})
		}
		return call(map[string]any{"results": results})
	case "commit_final_docset":
		return call(map[string]any{"summary": "The article is ready to publish."})
	case "commit_recovery_plan":
		return call(map[string]any{
			"instructions": "Look for case studies of " + section + " instead of surveys.",
			"queries":      []string{section + " case study", section + " small team example"},
			"rationale":    "The broad queries found nothing; concrete case studies are easier to find.",
		})
	case "commit_artifact_final_text":
		return call(map[string]any{"text": m.text(artifact, section, task)})
	}
	return openaitest.Response{Text: "?"}
}

// text writes an artifact's (or an item's) text, or fails research while told to.
func (m *blogModel) text(artifact, section, task string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	revise := strings.Contains(task, `Revise "`)
	if !revise {
		m.tries[artifact+"/"+section]++
	}
	switch artifact {
	case "plan":
		var b strings.Builder
		b.WriteString("# Async stand-ups for small teams\n\nFor team leads of 3–10 people.\n")
		for i := 1; i <= m.sections; i++ {
			fmt.Fprintf(&b, "\n## Section %d\nWhat section %d covers.\n", i, i)
		}
		return b.String()
	case "research":
		if m.tries["research/"+section] <= m.fail[section] {
			return "" // with failure set below
		}
		notes := "Notes on " + section + ": a fact [1](https://example.org/" + strings.ReplaceAll(strings.ToLower(section), " ", "-") + ")."
		if strings.Contains(task, "case studies of "+section) {
			notes += " Found through the recovered queries."
		}
		return notes
	case "sections":
		if revise {
			return "Edited draft of " + section + "."
		}
		return "Draft of " + section + "."
	case "article":
		return "# Async stand-ups for small teams\n\nMeta description: How small teams run stand-ups in writing.\n\n**TL;DR**\n- Write, don't meet.\n\nThe body.\n\n## Conclusion\nTry it.\n\n## References\n1. https://example.org/section-1"
	}
	return "Text of " + artifact + "."
}

// requests counts the recorded model requests that call fn for item section of
// artifact (the editor pass of an item included).
func requests(h *harness, fn, artifact, section string) int {
	n := 0
	for _, r := range h.ai.Requests() {
		if forced(r) != fn {
			continue
		}
		ma := artifactRE.FindStringSubmatch(systemText(r))
		mi := itemRE.FindStringSubmatch(r.LastUserMessage())
		if ma != nil && ma[1] == artifact && mi != nil && strings.TrimSpace(mi[3]) == section {
			n++
		}
	}
	return n
}

type blogHarness struct {
	*wfHarness
	blog *blogModel
}

func newBlogHarness(t testing.TB) *blogHarness {
	h := &blogHarness{wfHarness: &wfHarness{harness: newHarness(t, emulator.Config{}), model: &cannedModel{}}, blog: newBlogModel()}
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		resp := h.blog.respond(r)
		// A failing research write commits "failure" instead of a text.
		if len(resp.ToolCalls) == 1 && resp.ToolCalls[0].Name == "commit_artifact_final_text" && strings.Contains(resp.ToolCalls[0].Arguments, `"text":""`) {
			mi := itemRE.FindStringSubmatch(r.LastUserMessage())
			resp.ToolCalls[0].Arguments = fmt.Sprintf(`{"text":"","failure":"no sources found for %s"}`, strings.TrimSpace(mi[3]))
		}
		return resp
	})
	return h
}

// toPipeline starts blog with a slash command, picks outline A and approves it,
// which starts the pipeline. It returns the thread.
func (h *blogHarness) toPipeline() string {
	h.t.Helper()
	thread := h.startWorkflow(alice, "blog AI agents in production")
	h.click(thread, alice, "A: Angle A", "")
	h.click(thread, alice, "Approve", "")
	return thread
}

func TestE2EBlogPipeline(t *testing.T) {
	h := newBlogHarness(t)
	h.blog.fail["Section 2"] = 2 // fails twice, recovered, then succeeds
	h.blog.fail["Section 3"] = 9 // fails every try
	h.start()
	thread := h.toPipeline()
	h.waitFor("the article for review", func() bool {
		return strings.Contains(h.transcript(thread), "Meta description: How small teams")
	})
	tr := h.transcript(thread)
	for _, want := range []string{
		"pipeline finished in",          // the progress message, closed
		"Research notes 4/4 (1 failed)", // its tally
		"3 of 4 items written · 1 failed: Section 3",
		"failed after 3 tries: no sources found for Section 3",
		"Section drafts 4/4",
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("thread lacks %q:\n%s", want, tr)
		}
	}
	// Section 2: two failures, one recovery call, and the last try used its queries.
	if n := requests(h.harness, "commit_recovery_plan", "research", "Section 2"); n != 1 {
		t.Errorf("recovery calls for Section 2 = %d; want 1", n)
	}
	if n := requests(h.harness, "commit_artifact_final_text", "research", "Section 2"); n != 3 {
		t.Errorf("research writes for Section 2 = %d; want 3", n)
	}
	if n := requests(h.harness, "commit_artifact_final_text", "research", "Section 3"); n != 3 {
		t.Errorf("research writes for Section 3 = %d; want 3 (1 + retries 2)", n)
	}
	for _, s := range []string{"Section 1", "Section 4"} {
		if n := requests(h.harness, "commit_recovery_plan", "research", s); n != 0 {
			t.Errorf("%s: %d recovery calls; want none", s, n)
		}
	}
	// Every section drafted once and edited once (the editor pass).
	for i := 1; i <= 4; i++ {
		s := fmt.Sprintf("Section %d", i)
		if n := requests(h.harness, "commit_artifact_final_text", "sections", s); n != 2 {
			t.Errorf("%s: %d sections calls; want 2 (write and editor)", s, n)
		}
	}
	// The newest pipeline card, Section drafts, shortens its items; its Show full text
	// button posts the whole text to alice only.
	h.click(thread, alice, "Show full text", "")
	if eph := h.waitEphemeral(general, alice, "*Section drafts*"); !strings.Contains(eph, "Section 4") || strings.Contains(eph, "message clipped") {
		t.Errorf("Show full text posted:\n%s", eph)
	}
	h.click(thread, alice, "Approve", "")
	report := h.file("blog.md")
	if !strings.Contains(report, "Meta description:") || !strings.Contains(report, "## References") {
		t.Errorf("report:\n%s", report)
	}
	// The recovered research reached the section written from it.
	found := false
	for _, r := range h.ai.Requests() {
		if forced(r) == "commit_artifact_final_text" && strings.Contains(systemText(r), "Found through the recovered queries.") {
			found = true
		}
	}
	if !found {
		t.Error("no sections request carried Section 2's recovered research")
	}
	assertNoSlackErrors(t, h.harness)
}

// TestE2EBlogPipelineStop stops the pipeline in the middle of its research and
// continues it.
func TestE2EBlogPipelineStop(t *testing.T) {
	h := newBlogHarness(t)
	h.env["PIPELINE_CONCURRENCY"] = "1"
	h.start()
	thread := h.startWorkflow(alice, "blog AI agents in production")
	h.click(thread, alice, "A: Angle A", "")
	h.blog.mu.Lock()
	h.blog.delay = 300 * time.Millisecond
	h.blog.mu.Unlock()
	ts := h.latest(thread, "Approve", "")
	b := h.find(ts, "Approve", "")
	if _, err := h.emu.ClickButton(general, ts, alice, b.ActionID); err != nil {
		t.Fatal(err)
	}
	h.waitFor("two finished research items", func() bool {
		return requests(h.harness, "commit_artifact_final_text", "research", "Section 2") > 0
	})
	stopTS := h.latest(thread, "Stop", "")
	stop := h.find(stopTS, "Stop", "")
	env, err := h.emu.ClickButton(general, stopTS, alice, stop.ActionID)
	if err != nil {
		t.Fatal(err)
	}
	h.settleEnvelope(env)
	tr := h.transcript(thread)
	if !strings.Contains(tr, "stopped by <@U0ALICE>") || !strings.Contains(tr, "Continue") {
		t.Fatalf("no stopped progress message:\n%s", tr)
	}
	if strings.Contains(tr, "Section drafts") && strings.Contains(tr, "items written") {
		t.Fatal("the sections phase ran after Stop")
	}
	// A deliberate interval, not a synchronisation: the bot is idle (settleEnvelope),
	// and no model call may come during it.
	before := len(h.ai.Requests())
	time.Sleep(500 * time.Millisecond)
	if after := len(h.ai.Requests()); after != before {
		t.Fatalf("%d model calls after Stop", after-before)
	}
	h.blog.mu.Lock()
	h.blog.delay = 0
	h.blog.mu.Unlock()
	h.click(thread, alice, "Continue", "")
	h.waitFor("the article", func() bool { return strings.Contains(h.transcript(thread), "Meta description:") })
	for i := 1; i <= 4; i++ {
		s := fmt.Sprintf("Section %d", i)
		if n := requests(h.harness, "commit_artifact_final_text", "research", s); n < 1 || n > 2 {
			t.Errorf("%s researched %d times; want once (twice if Stop cut it)", s, n)
		}
	}
	if n := requests(h.harness, "commit_artifact_final_text", "research", "Section 1"); n != 1 {
		t.Errorf("Section 1 finished before Stop and was researched %d times", n)
	}
}

// TestE2EBlogPipelineResumesAfterKill stops the bot in the middle of the sections
// phase; the next start finishes the phase without repeating a finished section.
func TestE2EBlogPipelineResumesAfterKill(t *testing.T) {
	t.Run("SQLite", func(t *testing.T) { testBlogResume(t, "") })
	t.Run("Postgres", func(t *testing.T) { testBlogResume(t, storetest.PostgresDSN(t)) })
}

func testBlogResume(t *testing.T, databaseURL string) {
	h := newBlogHarness(t)
	h.env["DATABASE_URL"] = databaseURL
	h.env["SHUTDOWN_TIMEOUT"] = "100ms"
	h.env["PIPELINE_CONCURRENCY"] = "2"
	h.blog.sections = 6
	h.start()
	thread := h.startWorkflow(alice, "blog AI agents in production")
	h.click(thread, alice, "A: Angle A", "")
	ts := h.latest(thread, "Approve", "")
	b := h.find(ts, "Approve", "")
	h.blog.mu.Lock()
	h.blog.delay = 200 * time.Millisecond
	h.blog.mu.Unlock()
	if _, err := h.emu.ClickButton(general, ts, alice, b.ActionID); err != nil {
		t.Fatal(err)
	}
	// Section 3 starts once a section has finished (and was checkpointed): two run at once.
	h.waitFor("a finished section", func() bool {
		return requests(h.harness, "commit_artifact_final_text", "sections", "Section 3") >= 1
	})
	h.stop() // the sections phase is cut; its input stays pending
	calls := map[string]int{}
	for i := 1; i <= 6; i++ {
		s := fmt.Sprintf("Section %d", i)
		calls[s] = requests(h.harness, "commit_artifact_final_text", "sections", s)
	}
	done := h.doneItems(databaseURL, thread, "sections")
	if len(done) == 0 || len(done) == 6 {
		t.Fatalf("%d sections checkpointed before the kill; want some, not all", len(done))
	}
	h.blog.mu.Lock()
	h.blog.delay = 0
	h.blog.mu.Unlock()
	h.start()
	h.waitFor("the article", func() bool { return strings.Contains(h.transcript(thread), "Meta description:") })
	for i := 1; i <= 6; i++ {
		s := fmt.Sprintf("Section %d", i)
		if n := requests(h.harness, "commit_artifact_final_text", "research", s); n != 1 {
			t.Errorf("%s researched %d times; want once", s, n)
		}
		got := requests(h.harness, "commit_artifact_final_text", "sections", s) - calls[s]
		switch {
		case done[s] && got != 0:
			t.Errorf("%s was checkpointed before the kill and called the model %d more times", s, got)
		case !done[s] && got != 2:
			t.Errorf("%s: %d calls after the restart; want 2 (write and editor)", s, got)
		}
	}
	if strings.Count(h.transcript(thread), "Section drafts") < 1 {
		t.Error("no sections card")
	}
}

// doneItems reads the stored checkpoint of thread (the bot stopped) and returns the
// titles of artifact's finished items.
func (h *blogHarness) doneItems(databaseURL, thread, artifact string) map[string]bool {
	h.t.Helper()
	st, err := store.Open(context.Background(), store.Options{DatabaseURL: databaseURL, DataDir: h.dataDir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		h.t.Fatal(err)
	}
	defer st.Close()
	cp, err := st.Load(context.Background(), conversation.Key{TeamID: "T0TEAM", ChannelID: general, ThreadTS: thread}, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]bool{}
	for _, it := range cp.Conversation.State.Workflow.Artifacts[artifact].Items {
		if it.Status == workflow.ItemDone {
			out[it.Title] = true
		}
	}
	return out
}

// TestE2EBlogWithDemoModel runs the blog workflow on the offline demo model, as
// `threadwright dev` does: outline, the pipeline, the article and its report.
func TestE2EBlogWithDemoModel(t *testing.T) {
	h := newBlogHarness(t)
	h.harness.model = demo.New()
	h.harness.fetcher = demo.SourceFetcher{} // as threadwright dev's: no test reaches the internet
	h.start()
	thread := h.startWorkflow(alice, "blog AI agents in production")
	h.click(thread, alice, "A:", "")
	h.click(thread, alice, "Approve", "")
	h.waitFor("the article for review", func() bool {
		return strings.Contains(h.transcript(thread), "Meta description:")
	})
	tr := h.transcript(thread)
	if !strings.Contains(tr, "5 of 5 items written") || strings.Contains(tr, "failed after") {
		t.Fatalf("the demo's pipeline did not write every item:\n%s", tr)
	}
	if strings.Count(tr, "— Demo library: ") != 5 || strings.Contains(tr, "Not fetched") {
		t.Errorf("the sources are not the demo's pages:\n%s", tr)
	}
	if !strings.Contains(tr, "_(recovered: The last try failed with “Demo failure, to show retries") {
		t.Errorf("the demo's third research item was not shown recovered:\n%s", tr)
	}
	h.click(thread, alice, "Approve", "")
	report := h.file("blog.md")
	if strings.Count(report, "\n## ") < 5 || !strings.Contains(report, "References") {
		t.Errorf("report:\n%s", report)
	}
	assertNoSlackErrors(t, h.harness)
}

// TestE2EBlogResearchSearchesTheKnowledgeBase: without SEARXNG_URL, research is offered
// the knowledge base and fetch_url (not web_search), runs the model's search through
// the real tool, and the notes cite the ingested file.
func TestE2EBlogResearchSearchesTheKnowledgeBase(t *testing.T) {
	h := newBlogHarness(t)
	h.blog.searchKnowledge = true
	// Four searches at once on the embedded store take a few hundred milliseconds under
	// the race detector, and more on a loaded machine: the harness's 2 s, meant for the
	// tests of tool timeouts, is not what this test is about.
	h.env["TOOL_TIMEOUT"] = "30s"
	h.ingest("notes", "standups.md", "# Async stand-ups\n\n## What teams report\n\nTeams that moved their stand-ups to writing report fewer interruptions.\n")
	h.start()
	thread := h.toPipeline()
	h.waitFor("the article", func() bool { return strings.Contains(h.transcript(thread), "Meta description:") })
	searches := 0
	for _, r := range h.ai.Requests() {
		if ma := artifactRE.FindStringSubmatch(systemText(r)); ma == nil || ma[1] != "research" || forced(r) != "commit_artifact_final_text" {
			continue
		}
		if offered(r, "web_search") || !offered(r, "fetch_url") {
			t.Errorf("research offered web_search %v, fetch_url %v; want only what is configured", offered(r, "web_search"), offered(r, "fetch_url"))
		}
		if res := r.ToolResults(); len(res) > 0 {
			searches++
			if !strings.Contains(res[0].Content, "standups.md") || !strings.Contains(res[0].Content, "fewer interruptions") {
				t.Errorf("search_knowledge returned:\n%s", res[0].Content)
			}
		}
	}
	if searches != 4 {
		t.Errorf("%d research writes saw a search result; want 4 (one per section)", searches)
	}
	if tr := h.transcript(thread); !strings.Contains(tr, "4 of 4 items written") {
		t.Errorf("research did not finish every section:\n%s", tr)
	}
	cited := false
	for _, r := range h.ai.Requests() {
		if ma := artifactRE.FindStringSubmatch(systemText(r)); ma != nil && ma[1] == "sections" && strings.Contains(systemText(r), "notes/standups.md") {
			cited = true
		}
	}
	if !cited {
		t.Error("no section was written from notes that cite the knowledge base")
	}
	// The thread is told research runs without the web, on the start card and on
	// the research step's card; no setting name is shown.
	noWeb := "🔎 *Research notes*: runs without web search: no search service is set up here"
	if n := strings.Count(h.transcript(thread), noWeb); n != 2 {
		t.Errorf("%d messages say research runs without web search; want the start card and the research card:\n%s", n, h.transcript(thread))
	}
	if tr := h.transcript(thread); strings.Contains(tr, "SEARXNG") || strings.Contains(tr, "API_KEY") {
		t.Errorf("the thread names a setting:\n%s", tr)
	}
}
