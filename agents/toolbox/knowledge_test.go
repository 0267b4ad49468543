package toolbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/sqlite"
)

// fakeKnowledge is a knowledge base that only searches: it records the query and
// limit and returns passages (at most limit of them) or err.
type fakeKnowledge struct {
	conversation.Knowledge // nil: the tool must not call anything but Search
	passages               []conversation.Passage
	err                    error
	query                  string
	limit                  int
}

func (f *fakeKnowledge) Search(_ context.Context, query string, limit int) ([]conversation.Passage, error) {
	f.query, f.limit = query, limit
	return f.passages[:min(limit, len(f.passages))], f.err
}

func passage(source, heading, text string) conversation.Passage {
	return conversation.Passage{Chunk: conversation.Chunk{Source: source, Heading: heading, Text: text}, Score: 1}
}

func runKnowledge(t *testing.T, tool agents.Tool, args string) (string, error) {
	t.Helper()
	return tool.Run(context.Background(), json.RawMessage(args))
}

func TestKnowledgeToolSpec(t *testing.T) {
	spec, tool := toolbox.KnowledgeTool(&fakeKnowledge{}, 0)
	r := agents.NewRegistry()
	if err := r.Register(spec, tool); err != nil {
		t.Fatal(err)
	}
	if spec.Name != "search_knowledge" || spec.Category != toolbox.KnowledgeCategory {
		t.Errorf("spec = %s in %s; want search_knowledge in %s", spec.Name, spec.Category, toolbox.KnowledgeCategory)
	}
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Properties["query"].Type != "string" || schema.Properties["limit"].Type != "integer" ||
		len(schema.Required) != 1 || schema.Required[0] != "query" {
		t.Errorf("parameters = %s; want query (string, required) and limit (integer)", spec.Parameters)
	}
}

func TestKnowledgeTool(t *testing.T) {
	kb := &fakeKnowledge{passages: []conversation.Passage{
		passage("docs/handbook/leave.md", "Parental leave", "Sixteen weeks of paid parental leave.\n\nAsk HR.\n"),
		passage("docs/handbook/leave.md", "", "The leave policy."),
	}}
	_, tool := toolbox.KnowledgeTool(kb, 3)
	got, err := runKnowledge(t, tool, `{"query": "  parental\n leave "}`)
	if err != nil {
		t.Fatal(err)
	}
	want := `Found 2 passages in the knowledge base for "parental leave":

[1] docs/handbook/leave.md — Parental leave
Sixteen weeks of paid parental leave.

Ask HR.

[2] docs/handbook/leave.md
The leave policy.

Cite the passages you use as [n] right after what they support, e.g. "… 16 weeks [1]." Do not list the sources yourself: the reply lists the ones you cite under the answer.`
	if got != want {
		t.Errorf("result:\n%s\nwant:\n%s", got, want)
	}
	if kb.query != "parental leave" || kb.limit != 3 {
		t.Errorf("Search(%q, %d); want the query with its spaces collapsed and the tool's limit, 3", kb.query, kb.limit)
	}

	for _, tc := range []struct {
		args string
		want int
	}{{`{"query": "x", "limit": 1}`, 1}, {`{"query": "x", "limit": 500}`, toolbox.MaxKnowledgeLimit}, {`{"query": "x", "limit": -2}`, 3}} {
		if _, err := runKnowledge(t, tool, tc.args); err != nil || kb.limit != tc.want {
			t.Errorf("%s: Search limit %d, %v; want %d", tc.args, kb.limit, err, tc.want)
		}
	}
	if got, _ := runKnowledge(t, tool, `{"query": "x", "limit": 1}`); !strings.HasPrefix(got, `Found 1 passage in the knowledge base for "x":`) {
		t.Errorf("result with one passage = %q", got)
	}
}

func TestKnowledgeToolNothingFound(t *testing.T) {
	_, tool := toolbox.KnowledgeTool(&fakeKnowledge{}, 5)
	got, err := runKnowledge(t, tool, `{"query": "quantum coffee"}`)
	if err != nil || !strings.HasPrefix(got, `No passages found for "quantum coffee" in the knowledge base.`) {
		t.Errorf("result = %q, %v; want it to say nothing was found", got, err)
	}
}

func TestKnowledgeToolErrors(t *testing.T) {
	boom := errors.New("database is down")
	_, tool := toolbox.KnowledgeTool(&fakeKnowledge{err: boom}, 5)
	if _, err := runKnowledge(t, tool, `{"query": "x"}`); !errors.Is(err, boom) {
		t.Errorf("error %v; want the store's", err)
	}
	for _, args := range []string{`{"query": "  "}`, `{}`, `{"query": 3}`} {
		if _, err := runKnowledge(t, tool, args); err == nil {
			t.Errorf("%s: no error; want one", args)
		}
	}
}

func TestKnowledgeToolBounded(t *testing.T) {
	long := strings.Repeat("ж", 5000)
	var ps []conversation.Passage
	for range 20 {
		ps = append(ps, passage("big.md", "Big", long))
	}
	_, tool := toolbox.KnowledgeTool(&fakeKnowledge{passages: ps}, 20)
	got, err := runKnowledge(t, tool, `{"query": "big"}`)
	if err != nil {
		t.Fatal(err)
	}
	if n := utf8.RuneCountInString(got); n > 13000 {
		t.Errorf("result of %d characters; want it bounded", n)
	}
	if !strings.Contains(got, "ж …\n") || !strings.Contains(got, "more left out for length.)") ||
		!strings.HasSuffix(got, "the reply lists the ones you cite under the answer.") {
		t.Errorf("result = …%s; want passages cut, the rest counted and the citing line", got[len(got)-300:])
	}
}

// TestKnowledgeToolSQLite runs the tool on the real embedded store.
func TestKnowledgeToolSQLite(t *testing.T) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "threadwright.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	docs := map[string][]conversation.Chunk{
		"docs/handbook/leave.md": {
			{Heading: "Parental leave", Text: "Employees get sixteen weeks of paid parental leave."},
			{Heading: "Sick leave", Text: "Tell your manager before ten in the morning."},
		},
		"docs/it/vpn.md": {{Heading: "VPN", Text: "Install WireGuard to reach the staging environment."}},
	}
	for source, chunks := range docs {
		if _, err := s.ReplaceSource(ctx, source, "h1", conversation.Origin{}, chunks); err != nil {
			t.Fatal(err)
		}
	}
	_, tool := toolbox.KnowledgeTool(s, 5)
	got, err := runKnowledge(t, tool, `{"query": "How many weeks of parental leave do I get?"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, "[1] docs/handbook/leave.md — Parental leave\nEmployees get sixteen weeks of paid parental leave.") {
		t.Errorf("result:\n%s\nwant the parental leave chunk first", got)
	}
	if strings.Contains(got, "vpn.md") {
		t.Errorf("result:\n%s\nwant no VPN passage", got)
	}
	got, err = runKnowledge(t, tool, `{"query": "AND OR NOT * \"(unbalanced"}`)
	if err != nil || !strings.HasPrefix(got, "No passages found") {
		t.Errorf("query of operators = %q, %v; want nothing found, no error", got, err)
	}
}
