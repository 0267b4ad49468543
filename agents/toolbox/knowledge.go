package toolbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// KnowledgeCategory is the category of the search_knowledge tool.
const KnowledgeCategory = "Knowledge"

// Bounds of search_knowledge.
const (
	// DefaultKnowledgeLimit is the number of passages search_knowledge returns when
	// KnowledgeTool's limit is not positive.
	DefaultKnowledgeLimit = 5
	// MaxKnowledgeLimit is the most passages the model can ask search_knowledge for.
	MaxKnowledgeLimit = 20
	// maxPassageChars bounds the text of one passage in the result, in characters; a
	// chunk is about 1,200 (knowledge.MaxChunkChars), a fenced code block up to twice
	// that.
	maxPassageChars = 2500
	// maxKnowledgeResultChars bounds the passages of one result, in characters: the
	// passages that would go past it are left out, and the result says how many.
	maxKnowledgeResultChars = 12000
)

// KnowledgeTool returns the search_knowledge tool, {"query": "…", "limit": n}: it
// searches kb (conversation.Knowledge.Search, the database's full-text search over the
// documents `threadwright ingest` loaded) and returns the best passages, limit of them
// (DefaultKnowledgeLimit when limit is not positive) unless the model asks for another
// number, at most MaxKnowledgeLimit. Each passage is numbered with its source, for the
// answer to cite, "[1] handbook/leave.md — Parental leave", followed by its text
// (cut past 2,500 characters, the result past 12,000); the result ends with a line
// telling the model to cite the passages it uses as [n], which the reply turns into
// its list of sources (mrkdwn.Cite; docs/tools.md, "Citations"). When
// nothing matches, the result says so, and that the search matches words, not
// meanings. Errors: an empty query, and kb's.
func KnowledgeTool(kb conversation.Knowledge, limit int) (agents.ToolSpec, agents.Tool) {
	if limit <= 0 {
		limit = DefaultKnowledgeLimit
	}
	limit = min(limit, MaxKnowledgeLimit)
	spec := agents.ToolSpec{
		Name: "search_knowledge",
		Description: "Search the team's knowledge base: internal documents such as handbooks, policies, " +
			"runbooks and docs. Use it first for questions about how things work here. Returns the best " +
			"passages with numbered sources; cite them as [n]. It matches words, not meanings: search for " +
			"the key words of the question, and if nothing is found try other words or synonyms.",
		Category: KnowledgeCategory,
		Parameters: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
			`"query":{"type":"string","description":"the key words to look for, e.g. parental leave weeks"},`+
			`"limit":{"type":"integer","minimum":1,"maximum":%d,"description":"how many passages to return; default %d"}},`+
			`"required":["query"]}`, MaxKnowledgeLimit, limit)),
		// The operator chose the documents (threadwright ingest): internal, not
		// untrusted content (docs/tools.md, "Tool policy"); a result holding a
		// document an API token uploaded is reported untrusted (docs/api.md, "Tokens").
		ReadOnly: true,
	}
	run := func(ctx context.Context, raw json.RawMessage) (string, error) {
		var args struct {
			Query string `json:"query"`
			Limit int    `json:"limit"`
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			return "", fmt.Errorf("invalid arguments: %w", err)
		}
		query := strings.Join(strings.Fields(args.Query), " ")
		if query == "" {
			return "", errors.New("search_knowledge needs a non-empty query")
		}
		n := limit
		if args.Limit > 0 {
			n = min(args.Limit, MaxKnowledgeLimit)
		}
		passages, err := kb.Search(ctx, query, n)
		if err != nil {
			return "", fmt.Errorf("search_knowledge: %w", err)
		}
		agents.ReportEntities(ctx, passageEntities(passages)...) // agents/contract.go
		for _, p := range passages {
			if p.Untrusted {
				agents.ReportUntrusted(ctx)
				break
			}
		}
		return formatPassages(query, passages), nil
	}
	return spec, agents.ToolFunc(run)
}

// formatPassages renders passages found for query as search_knowledge's result: a
// line saying how many were found, then each passage numbered with its source and
// heading ("[1] handbook/leave.md — Parental leave") and its text, and a last
// line telling the model to cite them as [n]. With no passages it
// says that nothing was found and what to do.
func formatPassages(query string, passages []conversation.Passage) string {
	if len(passages) == 0 {
		return fmt.Sprintf("No passages found for %q in the knowledge base. The search matches words, "+
			"not meanings: try other key words or synonyms, or answer without it and say that the "+
			"knowledge base has nothing on this.", query)
	}
	var b strings.Builder
	shown, total := 0, 0
	for i, p := range passages {
		text := strings.TrimSpace(p.Text)
		if cut := textcut.Runes(text, maxPassageChars); cut != text {
			text = cut + " …"
		}
		if shown > 0 && total+utf8.RuneCountInString(text) > maxKnowledgeResultChars {
			break
		}
		total += utf8.RuneCountInString(text)
		shown++
		fmt.Fprintf(&b, "\n\n%s\n%s", passageRef(i+1, p.Chunk), text)
	}
	head := fmt.Sprintf("Found %d passages in the knowledge base for %q:", shown, query)
	if shown == 1 {
		head = fmt.Sprintf("Found 1 passage in the knowledge base for %q:", query)
	}
	if left := len(passages) - shown; left > 0 {
		fmt.Fprintf(&b, "\n\n(%d more left out for length.)", left)
	}
	b.WriteString("\n\nCite the passages you use as [n] right after what they support, e.g. \"… 16 weeks [1].\" " +
		"Do not list the sources yourself: the reply lists the ones you cite under the answer.")
	return head + b.String()
}

// passageRef returns "[n] source — heading", or "[n] source" for a chunk without a
// heading.
func passageRef(n int, c conversation.Chunk) string {
	return fmt.Sprintf("[%d] %s", n, sourceRef(c))
}

// sourceRef returns "source — heading", or the source alone.
func sourceRef(c conversation.Chunk) string {
	if h := strings.Join(strings.Fields(c.Heading), " "); h != "" {
		return c.Source + " — " + h
	}
	return c.Source
}

// passageEntities returns the sections of passages, in order, as the session
// context's entities: id "source#heading" (the source alone for a chunk without a
// heading), title the heading (or the source), type "section".
func passageEntities(passages []conversation.Passage) []conversation.Entity {
	out := make([]conversation.Entity, 0, len(passages))
	for _, p := range passages {
		e := conversation.Entity{ID: p.Source, Title: p.Source, Type: "section"}
		if h := strings.Join(strings.Fields(p.Heading), " "); h != "" {
			e.ID, e.Title = p.Source+"#"+h, h
		}
		out = append(out, e)
	}
	return out
}
