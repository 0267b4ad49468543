package main

import (
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// proposalModel answers the proposal's model calls as cannedModel does, except that
// research searches the knowledge base before it writes, its first text fails the
// critical criterion "sourced" until the editor revises it, and every evaluation of
// connections fails its critical criterion "no_invention".
type proposalModel struct {
	canned *cannedModel

	mu sync.Mutex
	// revisions counts the Revise calls per artifact, and guidance keeps their tasks.
	revisions map[string]int
	guidance  map[string][]string
}

var evalTextRE = regexp.MustCompile(`(?s)The text:(.*)`)

func (m *proposalModel) respond(r openaitest.Request) openaitest.Response {
	fn := forced(r)
	artifact := ""
	if ma := artifactRE.FindStringSubmatch(systemText(r)); ma != nil {
		artifact = ma[1]
	}
	task := r.LastUserMessage()
	call := func(args any) openaitest.Response {
		b, _ := json.Marshal(args)
		return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: fn, Arguments: string(b)}}}
	}
	if fn == "commit_artifact_final_text" && strings.HasPrefix(task, "Revise") {
		m.mu.Lock()
		m.revisions[artifact]++
		m.guidance[artifact] = append(m.guidance[artifact], task)
		m.mu.Unlock()
	}
	switch {
	case artifact == "research" && fn == "commit_artifact_final_text" && strings.HasPrefix(task, "Revise"):
		return call(map[string]string{"text": "Research notes, every figure sourced: tenants pay 40% more for heating [1].\n\n[1] energy.md"})
	case artifact == "connections" && fn == "commit_artifact_final_text" && strings.HasPrefix(task, "Revise"):
		return call(map[string]string{"text": "Partners: the revision, with Acme Housing still named."})
	case artifact == "research" && fn == "commit_artifact_final_text":
		if !offered(r, "search_knowledge") {
			return call(map[string]string{"text": "Research notes without a search."})
		}
		results := r.ToolResults()
		if len(results) == 0 {
			args, _ := json.Marshal(map[string]string{"query": "tenant heating costs"})
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: "search_knowledge", Arguments: string(args)}}}
		}
		return call(map[string]string{"text": "Research notes: tenants pay 40% more for heating. Source: " + sourceOf(results[0].Content)})
	case fn == "commit_evaluation" && (artifact == "research" || artifact == "connections"):
		text := ""
		if mt := evalTextRE.FindStringSubmatch(task); mt != nil {
			text = mt[1]
		}
		var results []map[string]any
		for _, id := range evaluationIDs(r) {
			pass, reason := true, "Meets the criterion."
			switch {
			case artifact == "research" && id == "sourced" && !strings.Contains(text, "every figure sourced"):
				pass, reason = false, "The figure 40% names no source."
			case artifact == "connections" && id == "no_invention":
				pass, reason = false, "Names a partner nobody mentioned: Acme Housing."
			}
			results = append(results, map[string]any{"id": id, "pass": pass, "reason": reason})
		}
		return call(map[string]any{"results": results})
	}
	return m.canned.respond(r)
}

// evaluationIDs returns the criterion ids commit_evaluation's schema lists.
func evaluationIDs(r openaitest.Request) []string {
	for _, t := range r.Chat.Tools {
		if t.Function == nil || t.Function.Name != "commit_evaluation" {
			continue
		}
		raw, _ := json.Marshal(t.Function.Parameters)
		var schema struct {
			Properties struct {
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
		return schema.Properties.Results.Items.Properties.ID.Enum
	}
	return nil
}

// TestE2EProposalReviewedResearchAndVerdictRevision: the proposal's research searches
// the knowledge base (a real search_knowledge call, on an ingested document; web_search
// is not offered without SEARXNG_URL), and its first text fails the critical
// criterion "sourced", so its verdict fails: the editor revises it once, with the
// failing criterion and its reason as guidance, before anyone sees it, and the card
// shows both verdicts. The research then waits for people: nothing of the solution
// comes before Approve. Connections fails its critical criterion whatever is
// written: it is revised once, never twice, and its card shows fail → fail.
func TestE2EProposalReviewedResearchAndVerdictRevision(t *testing.T) {
	h := newWorkflowHarness(t)
	pm := &proposalModel{canned: h.model, revisions: map[string]int{}, guidance: map[string][]string{}}
	h.ai.Handle(pm.respond)
	h.env["TOOL_TIMEOUT"] = "30s" // a search on a loaded machine; not what this test is about
	h.env["API_ADDR"] = "127.0.0.1:0"
	h.env["API_TOKENS"] = "ci-bot:" + ciSecret + ";scope=admin"
	h.ingest("notes", "energy.md", "# Tenant energy\n\n## Heating costs\n\nTenants of old blocks pay 40% more for heating than owners.\n")
	h.start()
	thread := h.startWorkflow(alice, "proposal")

	// Research: searched, revised once, shown for review with both verdicts.
	card := h.latest(thread, "Approve", "")
	contexts := strings.Join(blockTexts(h, thread, card, "context"), "\n")
	sections := strings.Join(blockTexts(h, thread, card, "section"), "\n")
	if !strings.Contains(sections, "every figure sourced") {
		t.Errorf("the research card does not show the revised text:\n%s", sections)
	}
	if !strings.Contains(contexts, "✅ 4 of 4 criteria met") ||
		!strings.Contains(contexts, "⚖️ *Verdict:* ❌ fail (3 of 4 criteria met) → ✅ pass (4 of 4) after one automatic revision") {
		t.Errorf("the research card's evaluation:\n%s", contexts)
	}
	if h.find(card, "A: Direction A", "") != nil || strings.Contains(h.transcript(thread), "Direction A") {
		t.Fatal("the solution's options came before the research was approved")
	}
	searched := false
	for _, r := range h.ai.Requests() {
		ma := artifactRE.FindStringSubmatch(systemText(r))
		if ma == nil || ma[1] != "research" || forced(r) != "commit_artifact_final_text" || strings.HasPrefix(r.LastUserMessage(), "Revise") {
			continue
		}
		if offered(r, "web_search") || !offered(r, "search_knowledge") {
			t.Errorf("research offered web_search %v, search_knowledge %v; want only what is configured", offered(r, "web_search"), offered(r, "search_knowledge"))
		}
		for _, res := range r.ToolResults() {
			if strings.Contains(res.Content, "energy.md") && strings.Contains(res.Content, "40% more for heating") {
				searched = true
			}
		}
	}
	if !searched {
		t.Error("no research write saw a search_knowledge result from the ingested document")
	}
	pm.mu.Lock()
	if n := pm.revisions["research"]; n != 1 {
		t.Errorf("research revised %d times, want once", n)
	} else if g := pm.guidance["research"][0]; !strings.Contains(g, "The evaluation failed: 3 of 4 criteria met, and a critical criterion failed") ||
		!strings.Contains(g, "Every figure and factual claim says where it comes from") || !strings.Contains(g, "(critical): The figure 40% names no source.") {
		t.Errorf("the revision's guidance lacks the failing criterion:\n%s", g)
	}
	pm.mu.Unlock()

	// Approving the research starts the sections.
	h.click(thread, alice, "Approve", "")
	h.click(thread, alice, "A: Direction A", "")
	h.click(thread, alice, "Approve", "") // the solution
	card = h.latest(thread, "Approve", "")
	contexts = strings.Join(blockTexts(h, thread, card, "context"), "\n")
	if !strings.Contains(contexts, "❌ *Names only partners and programmes mentioned in the thread or the research") ||
		!strings.Contains(contexts, "⚖️ *Verdict:* ❌ fail (2 of 3 criteria met) → ❌ fail (2 of 3) after one automatic revision") {
		t.Errorf("the connections card's evaluation:\n%s", contexts)
	}
	pm.mu.Lock()
	if n := pm.revisions["connections"]; n != 1 {
		t.Errorf("connections revised %d times, want once", n)
	} else if g := pm.guidance["connections"][0]; !strings.Contains(g, "Names only partners and programmes mentioned") || !strings.Contains(g, "Acme Housing") {
		t.Errorf("the connections revision's guidance lacks the failing criterion:\n%s", g)
	}
	if n := pm.revisions["solution"]; n != 0 {
		t.Errorf("the solution, whose verdict passed, was revised %d times", n)
	}
	pm.mu.Unlock()

	// The HTTP API gives both verdicts too.
	c := apiClient{t: t, base: "http://" + h.main.APIAddr()}
	var list struct {
		Runs []api.RunSummary `json:"runs"`
	}
	c.expect(http.StatusOK, "GET", "/v1/runs", ciSecret, nil, &list)
	if len(list.Runs) != 1 {
		t.Fatalf("runs: %+v", list.Runs)
	}
	var run api.Run
	c.expect(http.StatusOK, "GET", "/v1/runs/"+list.Runs[0].ID, ciSecret, nil, &run)
	if v := artifactOf(t, &run, "connections").Verdict; v == nil || v.Pass || v.Met != 2 || v.Total != 3 || !slices.Equal(v.CriticalFailed, []string{"no_invention"}) ||
		v.Before == nil || v.Before.Pass || v.Before.Met != 2 {
		t.Errorf("the API's verdict of connections: %+v", v)
	}
	if v := artifactOf(t, &run, "research").Verdict; v == nil || !v.Pass || v.Before == nil || v.Before.Pass || v.Before.Met != 3 {
		t.Errorf("the API's verdict of research: %+v", v)
	}

	ws := storedWorkflow(h.harness, thread)
	if c := ws.Artifacts["connections"]; len(c.PriorEval) != 3 || len(c.Eval) != 3 {
		t.Errorf("stored connections: eval %+v, prior %+v", c.Eval, c.PriorEval)
	}
	if r := ws.Artifacts["research"]; r.Status != "approved" || !strings.Contains(r.Text, "every figure sourced") {
		t.Errorf("stored research: %s %q", r.Status, r.Text)
	}
}

// TestE2EProposalOnTheDemoModel: the offline demo model (playground/demo), answering
// through the fake OpenAI server, runs the whole proposal in a thread: the research
// waits for review before the solution's options, every card carries a verdict, and
// the report is uploaded at the end.
func TestE2EProposalOnTheDemoModel(t *testing.T) {
	h := newWorkflowHarness(t)
	h.ai.Handle(demoHandler(demo.New()))
	h.start()
	thread := h.startWorkflow(alice, "proposal")
	research := h.latest(thread, "Approve", "")
	if m, _ := h.emu.Message(general, research); !strings.Contains(string(m.Blocks), "Background research") {
		t.Fatalf("the first card is not the research: %s", m.Blocks)
	}
	if strings.Contains(h.transcript(thread), "Options for") {
		t.Fatal("the solution's options came before the research was approved")
	}
drive:
	for range 30 {
		msgs := h.emu.BotMessages(general, thread)
		last := msgs[len(msgs)-1]
		switch {
		case h.find(last.TS, "A: ", "") != nil:
			h.click(thread, alice, "A: ", "")
		case h.find(last.TS, "Approve", "") != nil:
			h.click(thread, alice, "Approve", "")
		default:
			break drive
		}
	}
	report := h.file("proposal.md")
	for _, want := range []string{"## 1. Problem statement", "## 7. Conclusion", "## Appendix: Background research"} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	tr := h.transcript(thread)
	if strings.Count(tr, "⚖️ *Verdict:*") < 8 {
		t.Errorf("fewer than 8 cards carry a verdict:\n%s", tr)
	}
	// The demo fails a criterion now and then: its automatic revision's note names
	// the criteria it met, not the engine's whole request.
	if strings.Contains(tr, "Revised as asked: The evaluation failed") {
		t.Errorf("an editor's note quotes the automatic revision's request:\n%s", tr)
	}
	assertNoSlackErrors(t, h.harness)
}

// TestE2EProposalResearchSearchesTheWeb: with SEARXNG_URL set, the proposal's
// research is offered web_search, the real tool queries the (local) search engine,
// and the research people review cites the pages it found.
func TestE2EProposalResearchSearchesTheWeb(t *testing.T) {
	web := newBlogWeb(t)
	h := newWorkflowHarness(t)
	h.env["SEARXNG_URL"] = web.search.URL
	h.env["TOOL_TIMEOUT"] = "30s" // a loaded machine; not what this test is about
	h.ai.Handle(demoHandler(demo.New()))
	h.start()
	thread := h.startWorkflow(alice, "proposal")
	card := h.latest(thread, "Approve", "")
	searched := false
	for _, r := range h.ai.Requests() {
		ma := artifactRE.FindStringSubmatch(systemText(r))
		if ma == nil || ma[1] != "research" || !offered(r, "web_search") {
			continue
		}
		for _, res := range r.ToolResults() {
			if strings.Contains(res.Content, web.pages.URL+"/articles/") {
				searched = true
			}
		}
	}
	if !searched {
		t.Fatal("the research's model requests saw no web_search result from the search engine")
	}
	if m, _ := h.emu.Message(general, card); !strings.Contains(string(m.Blocks), web.pages.URL+"/articles/") {
		t.Errorf("the research under review cites no page the search found:\n%s", m.Blocks)
	}
}
