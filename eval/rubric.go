package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// RubricJudge grades the thread of a run against its case's rubric with a second
// model (docs/eval.md, "Rubrics"). Its grades are reported apart from the judge-free
// checks and do not decide whether a run passes. It is safe for concurrent use: the
// calls are made one at a time, so that MaxCost holds.
type RubricJudge struct {
	// Model answers the judge's calls, as ModelName; a run's calls go through the
	// run's model wrap (the cassette), so a replay replays them too.
	Model     agents.Completer
	ModelName string
	// Prices price the judge's calls; MaxCost bounds their total in USD (0: no
	// bound). Once the bound is reached, the rubrics left are skipped.
	Prices  conversation.Prices
	MaxCost float64

	mu    sync.Mutex
	spent float64
}

// RubricResult is a rubric's grade of a run.
type RubricResult struct {
	// Score is between 0 and 1; Pass the judge's verdict; Reason its one sentence.
	Score  float64 `json:"score"`
	Pass   bool    `json:"pass"`
	Reason string  `json:"reason,omitempty"`
	// CostUSD is the judge call's cost (nil when unpriced).
	CostUSD *float64 `json:"cost_usd,omitempty"`
	// Skipped says why the rubric was not judged (the cost bound; an error).
	Skipped string `json:"skipped,omitempty"`
}

// gradeTool is the function the judge must call.
const gradeTool = "grade_against_rubric"

const rubricSystem = `You grade the work of a Slack assistant, threadwright, against a rubric. You read the thread as it happened (the people's messages and the bot's replies) and the rubric, and you judge only what the rubric asks. Call ` + gradeTool + ` once: score from 0 (fails the rubric entirely) to 1 (meets every point), pass when it meets the rubric as a whole, and a one-sentence reason.`

// maxRubricThread bounds the thread given to the judge, in bytes.
const maxRubricThread = 24 << 10

// judge grades transcript tr against rubric through model (the run's wrap of
// j.Model).
func (j *RubricJudge) judge(ctx context.Context, model agents.Completer, rubric string, c *Case, tr *Transcript) *RubricResult {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.MaxCost > 0 && j.spent >= j.MaxCost {
		return &RubricResult{Skipped: fmt.Sprintf("the rubric's cost bound ($%.2f) is reached", j.MaxCost)}
	}
	var thread strings.Builder
	for i, s := range tr.Steps {
		fmt.Fprintf(&thread, "### Step %d: %s\n", i+1, c.Thread[i])
		if s.Reply != "" {
			fmt.Fprintf(&thread, "threadwright replied:\n%s\n", s.Reply)
		}
		thread.WriteString("\n")
	}
	req := openai.ChatCompletionRequest{
		Model: j.ModelName,
		Messages: []openai.ChatCompletionMessage{
			{Role: openai.ChatMessageRoleSystem, Content: rubricSystem},
			{Role: openai.ChatMessageRoleUser, Content: "## The rubric\n" + strings.TrimSpace(rubric) +
				"\n\n## The thread\n" + textcut.BytesMark(thread.String(), maxRubricThread, textcut.Truncated)},
		},
		Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
			Name: gradeTool, Description: "Record the grade of the thread against the rubric.",
			Parameters: json.RawMessage(`{"type":"object","properties":{` +
				`"score":{"type":"number","minimum":0,"maximum":1,"description":"0: fails the rubric entirely; 1: meets every point"},` +
				`"pass":{"type":"boolean","description":"whether the thread meets the rubric as a whole"},` +
				`"reason":{"type":"string","description":"one sentence"}},"required":["score","pass","reason"]}`),
		}}},
		ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: gradeTool}},
	}
	comp, err := model.Complete(ctx, req)
	res := &RubricResult{}
	if usd, ok := j.Prices.Cost(j.ModelName, int64(comp.Usage.PromptTokens), int64(comp.Usage.CompletionTokens)); ok {
		j.spent += usd
		res.CostUSD = &usd
	}
	if err != nil {
		res.Skipped = "the judge failed: " + clip(err.Error(), 300)
		return res
	}
	if err := res.read(comp); err != nil {
		res.Skipped = err.Error()
	}
	return res
}

// read reads the judge's grade from its completion.
func (r *RubricResult) read(comp agents.Completion) error {
	for _, tc := range comp.ToolCalls {
		if tc.Function.Name != gradeTool {
			continue
		}
		var g struct {
			Score  *float64 `json:"score"`
			Pass   bool     `json:"pass"`
			Reason string   `json:"reason"`
		}
		if err := json.Unmarshal([]byte(tc.Function.Arguments), &g); err != nil || g.Score == nil || *g.Score < 0 || *g.Score > 1 {
			return errors.New("the judge's grade is not a score from 0 to 1")
		}
		r.Score, r.Pass, r.Reason = *g.Score, g.Pass, clip(g.Reason, 500)
		return nil
	}
	return errors.New("the judge did not call " + gradeTool)
}
