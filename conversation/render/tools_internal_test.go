package render

import (
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestToolNotices checks what the cards say of the tools an artifact names that
// cannot run: web search in plain words, other tools by name, nothing when all can
// or when nothing tells.
func TestToolNotices(t *testing.T) {
	def, err := workflow.Parse("t.yaml", []byte("name: t\ntitle: T\ndescription: d\nartifacts:\n"+
		"  - id: research\n    title: Research\n    mode: auto\n    tools: [web_search, crm__lookup, search_knowledge]\n"+
		"  - id: draft\n    title: Draft\n    depends_on: [research]\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := Cards{Lang: "en", Def: def, ToolAvailable: func(name string) bool { return name == "search_knowledge" }}
	want := "🔎 *Research*: runs without web search: no search service is set up here, so it draws on the knowledge base, the thread and the pages it was given.\n" +
		"🧰 *Research*: runs without `crm__lookup`: not available in this channel."
	if got := c.toolNotices(def.Order()); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	c.Lang = "ru"
	if got := c.toolNotices([]string{"research"}); got == "" || got == want {
		t.Errorf("no Russian notice: %q", got)
	}
	c.ToolAvailable = func(string) bool { return true }
	if got := c.toolNotices(def.Order()); got != "" {
		t.Errorf("every tool available, got %q", got)
	}
	c.ToolAvailable = nil
	if got := c.toolNotices(def.Order()); got != "" {
		t.Errorf("nothing tells what is available, got %q", got)
	}
}
