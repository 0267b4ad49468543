package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

// scrapeYAML: a reviewed plan, research of its sections in one batch write, the
// pages the research links (fetch), then sections written from both.
const scrapeYAML = `name: scrape
title: Scrape
artifacts:
  - id: plan
    title: Plan
  - id: research
    title: Research
    mode: auto
    depends_on: [plan]
    foreach: plan
    research_strategy: batch
  - id: sources
    title: Sources
    mode: auto
    depends_on: [plan, research]
    foreach: plan
    fetch: research
  - id: sections
    title: Sections
    mode: auto
    depends_on: [plan, research, sources]
    foreach: plan
`

// TestE2ESourcesPhase: research written in one batch links pages of a local server
// (and one that fails); the sources phase fetches them through the real fetcher
// (FETCH_ALLOW_HOSTS lets it reach the server), and each section's model request
// carries its own pages' text and the failure; the pipeline finishes.
func TestE2ESourcesPhase(t *testing.T) {
	pages := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/broken" {
			http.Error(w, "down", http.StatusInternalServerError)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, "/")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<html><head><title>Page %s</title></head><body><nav>Menu</nav><p>The scraped body of %s.</p></body></html>`, name, name)
	}))
	t.Cleanup(pages.Close)

	h := &wfHarness{harness: newHarness(t, emulator.Config{}), model: &cannedModel{}}
	h.ai.Handle(func(r openaitest.Request) openaitest.Response {
		fn := forced(r)
		call := func(args any) openaitest.Response {
			b, _ := json.Marshal(args)
			return openaitest.Response{ToolCalls: []openaitest.ToolCall{{Name: fn, Arguments: string(b)}}}
		}
		artifact := ""
		if ma := artifactRE.FindStringSubmatch(systemText(r)); ma != nil {
			artifact = ma[1]
		}
		switch fn {
		case "commit_final_docset":
			return call(map[string]any{"summary": "Scraped."})
		case "commit_artifact_final_text":
		default:
			return openaitest.Response{Text: "An answer."}
		}
		task := r.LastUserMessage()
		switch artifact {
		case "plan":
			return call(map[string]any{"text": "# Plan\n\n## Alpha\nabout alpha\n\n## Beta\nabout beta\n"})
		case "research":
			if !strings.Contains(task, `Write all 2 items in one text, one "## " section per item`) {
				return call(map[string]any{"text": "", "failure": "not a batch"})
			}
			return call(map[string]any{"text": fmt.Sprintf("## Alpha\nSee %[1]s/alpha and %[1]s/broken.\n\n## Beta\nSee [b](%[1]s/beta).", pages.URL)})
		case "sections":
			mi := itemRE.FindStringSubmatch(task)
			return call(map[string]any{"text": "Section on " + strings.TrimSpace(mi[3]) + "."})
		}
		return call(map[string]any{"text": "Text of " + artifact + "."})
	})
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "scrape.yaml"), []byte(scrapeYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	h.env["WORKFLOWS_DIR"] = dir
	h.env["FETCH_ALLOW_HOSTS"] = strings.TrimPrefix(pages.URL, "http://")
	h.start()
	thread := h.startWorkflow(alice, "scrape")
	h.click(thread, alice, "Approve", "")
	h.waitFor("the pipeline's end", func() bool { return strings.Contains(h.transcript(thread), "pipeline finished in") })

	// One research request, for both items.
	research := 0
	sections := map[string]string{} // item → the system prompt of its write
	for _, r := range h.ai.Requests() {
		if forced(r) != "commit_artifact_final_text" {
			continue
		}
		ma := artifactRE.FindStringSubmatch(systemText(r))
		switch {
		case ma == nil:
		case ma[1] == "research":
			research++
		case ma[1] == "sections":
			if mi := itemRE.FindStringSubmatch(r.LastUserMessage()); mi != nil {
				sections[strings.TrimSpace(mi[3])] = systemText(r)
			}
		}
	}
	if research != 1 {
		t.Errorf("%d research requests; want 1 (the batch)", research)
	}
	alpha, beta := sections["Alpha"], sections["Beta"]
	for _, want := range []string{"The scraped body of alpha.", "Source: " + pages.URL + "/alpha", "Not fetched: fetch " + pages.URL + "/broken: HTTP 500"} {
		if !strings.Contains(alpha, want) {
			t.Errorf("the Alpha section's request lacks %q:\n%s", want, alpha)
		}
	}
	if !strings.Contains(beta, "The scraped body of beta.") || strings.Contains(beta, "The scraped body of alpha.") || strings.Contains(beta, "Menu") {
		t.Errorf("the Beta section's request has not Beta's page text alone:\n%s", beta)
	}
	assertNoSlackErrors(t, h.harness)
}
