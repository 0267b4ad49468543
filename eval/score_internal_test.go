package eval

import (
	"context"
	"errors"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/toolbox"
	"github.com/threadwright/threadwright/conversation"
)

// TestSummarize: a case passes when its share of passing runs reaches the pass
// rate, and otherwise takes its worst run's status; the summary counts cases, runs
// and checks, sums the cost (unknown when a run's is), and averages retrieval and
// rubric grades apart.
func TestSummarize(t *testing.T) {
	cost := func(f float64) *float64 { return &f }
	rep := &Report{Cases: []CaseResult{
		{Name: "half", Runs: []RunResult{
			{Status: StatusPass, Checks: []Check{{Name: "answer", Pass: true}}, Usage: Usage{CostUSD: cost(0.5)},
				Rubric: &RubricResult{Score: 0.8, Pass: true, CostUSD: cost(0.01)}},
			{Status: StatusFail, Checks: []Check{{Name: "answer"}}, Usage: Usage{CostUSD: cost(0.25)},
				Rubric: &RubricResult{Skipped: "the rubric's cost bound ($0.01) is reached"}},
		}},
		{Name: "drifted", Runs: []RunResult{{Status: StatusFail}, {Status: StatusDrift}}},
		{Name: "broken", Runs: []RunResult{{Status: StatusError, Usage: Usage{Unpriced: []string{"m"}}}}},
		{Name: "search", Runs: []RunResult{{Status: StatusPass, Retrieval: &RetrievalScore{Recall: 0.5, MRR: 0.25, Questions: make([]QuestionResult, 4)}}}},
	}}
	rep.summarize(0.5)
	st := map[string]string{}
	for _, c := range rep.Cases {
		st[c.Name] = c.Status
	}
	if st["half"] != StatusPass || st["drifted"] != StatusDrift || st["broken"] != StatusError || st["search"] != StatusPass {
		t.Errorf("statuses %v", st)
	}
	s := rep.Summary
	if s.Cases != 4 || s.Passed != 2 || s.Drift != 1 || s.Errors != 1 || s.Runs != 6 || s.RunsPassed != 2 || s.Checks["answer"] != (Score{1, 2}) {
		t.Errorf("summary %+v", s)
	}
	if s.Usage.CostUSD != nil || len(s.Usage.Unpriced) != 1 {
		t.Errorf("cost with an unpriced run: %+v", s.Usage)
	}
	if s.Retrieval == nil || s.Retrieval.Questions != 4 || s.Retrieval.Recall != 0.5 || s.Retrieval.MRR != 0.25 {
		t.Errorf("retrieval %+v", s.Retrieval)
	}
	if r := s.Rubric; r == nil || r.Judged != 1 || r.Skipped != 1 || r.Passed != 1 || r.Score != 0.8 || *r.CostUSD != 0.01 {
		t.Errorf("rubric %+v", s.Rubric)
	}
	rep.summarize(1)
	if rep.Cases[0].Status != StatusFail || rep.Passed() {
		t.Errorf("with every run required: %s", rep.Cases[0].Status)
	}
}

// knowledgeBase is a conversation.Knowledge that finds the chunks whose text has a
// word of the query, in their order.
type knowledgeBase []conversation.Chunk

func (kb knowledgeBase) ReplaceSource(context.Context, string, string, conversation.Origin, []conversation.Chunk) (bool, error) {
	return false, errors.New("read-only")
}
func (kb knowledgeBase) DeleteSource(context.Context, string) error { return errors.New("read-only") }
func (kb knowledgeBase) Sources(context.Context) ([]conversation.SourceInfo, error) {
	return nil, nil
}
func (kb knowledgeBase) Search(_ context.Context, query string, limit int) ([]conversation.Passage, error) {
	var out []conversation.Passage
	for _, c := range kb {
		for _, w := range strings.Fields(query) {
			if strings.Contains(c.Text, w) && len(out) < limit {
				out = append(out, conversation.Passage{Chunk: c})
				break
			}
		}
	}
	return out, nil
}

// TestScoreRetrieval: recall@k counts the expected sources among the first k
// passages that search_knowledge returns (a document, or a document and heading),
// and MRR the rank of the first.
func TestScoreRetrieval(t *testing.T) {
	kb := knowledgeBase{
		{Source: "a.md", Heading: "Leave", Text: "leave weeks"},
		{Source: "b.md", Heading: "Travel", Text: "leave travel hotel"},
		{Source: "c.md", Heading: "Hotel", Text: "hotel limit"},
	}
	_, tool := toolbox.KnowledgeTool(kb, 5)
	r := &Retrieval{K: 2, MinRecall: 0.9, Questions: []Question{
		{Question: "leave", Expect: []string{"b.md — Travel"}},      // rank 2
		{Question: "hotel", Expect: []string{"c.md", "nowhere.md"}}, // rank 2, half found
		{Question: "zebra", Expect: []string{"a.md"}},               // nothing found
	}}
	s, err := scoreRetrieval(context.Background(), tool, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Questions[0]; got.Rank != 2 || got.Recall != 1 || strings.Join(got.Found, "|") != "a.md — Leave|b.md — Travel" {
		t.Errorf("leave: %+v", got)
	}
	if got := s.Questions[1]; got.Rank != 2 || got.Recall != 0.5 {
		t.Errorf("hotel: %+v", got)
	}
	if got := s.Questions[2]; got.Rank != 0 || got.Recall != 0 || len(got.Found) != 0 {
		t.Errorf("zebra: %+v", got)
	}
	if s.Recall != 0.5 || s.MRR != (0.5+0.5)/3 {
		t.Errorf("recall %v, MRR %v", s.Recall, s.MRR)
	}
	c, ok := s.check(r)
	if !ok || c.Pass || !strings.Contains(c.Detail, "recall@2 0.50 (at least 0.90)") || !strings.Contains(c.Detail, `"hotel" found`) {
		t.Errorf("check %+v", c)
	}
	if _, err := scoreRetrieval(context.Background(), nil, r); err == nil {
		t.Error("no search tool: no error")
	}
}

// judgeModel answers the rubric's call with args, counting the calls.
type judgeModel struct {
	args  string
	calls int
}

func (m *judgeModel) Complete(_ context.Context, req openai.ChatCompletionRequest) (agents.Completion, error) {
	m.calls++
	if forcedFunction(req) != gradeTool || !strings.Contains(req.Messages[1].Content, "The answer states 391") ||
		!strings.Contains(req.Messages[1].Content, "threadwright replied:\n17 × 23 = 391") {
		return agents.Completion{}, errors.New("unexpected request")
	}
	return agents.Completion{ToolCalls: []openai.ToolCall{{Function: openai.FunctionCall{Name: gradeTool, Arguments: m.args}}},
		Usage: conversation.Usage{PromptTokens: 1_000_000}}, nil
}

// TestRubric: the judge's grade is read from its call; a grade that is not one is
// skipped with the reason; once the cost bound is reached, the rubrics left are
// skipped without a call.
func TestRubric(t *testing.T) {
	c := &Case{Thread: []Step{{User: "alice", Say: "what is 17 * 23?"}}}
	tr := &Transcript{Steps: []StepResult{{Reply: "17 × 23 = 391"}}}
	m := &judgeModel{args: `{"score": 0.9, "pass": true, "reason": "It states 391."}`}
	j := &RubricJudge{Model: m, ModelName: "judge", Prices: conversation.Prices{"judge": {Input: 0.5}}, MaxCost: 1}
	ctx := context.Background()
	r := j.judge(ctx, m, "The answer states 391.", c, tr)
	if r.Skipped != "" || r.Score != 0.9 || !r.Pass || r.Reason != "It states 391." || r.CostUSD == nil || *r.CostUSD != 0.5 {
		t.Errorf("grade %+v", r)
	}
	m.args = `{"score": 7}`
	if r := j.judge(ctx, m, "The answer states 391.", c, tr); r.Skipped != "the judge's grade is not a score from 0 to 1" {
		t.Errorf("a bad grade: %+v", r)
	}
	if r := j.judge(ctx, m, "The answer states 391.", c, tr); !strings.Contains(r.Skipped, "cost bound ($1.00) is reached") || m.calls != 2 {
		t.Errorf("past the bound: %+v after %d calls", r, m.calls)
	}
}
