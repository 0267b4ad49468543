package agents

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// Bounds of the failures the recovery prompt shows.
const (
	maxFailures = 5   // the newest
	maxFailure  = 600 // bytes of one, made one line
)

// Recover is the recovery agent: before the last retry of a failing item (r.Item), or
// of a whole auto artifact (r.Item nil), it reads failures, the errors of the failed
// tries, oldest first, and rewrites the instructions for the last try
// (commit_recovery_plan), with the main model or r.Profile's. The task (template
// prompts.RecoveryPlan) shows the item line "Item <n> of <total>: <title>" and its
// brief, the instructions the tries had (r.Instructions), the newest 5 failures, each
// one line of at most 600 bytes, and the tools the writer may call (the artifact's
// tools that WorkflowAgentConfig.Tools has); it asks for new, more specific
// instructions and, for research, search queries, with a rationale.
//
// The Recovery's Instructions are trimmed and must not be empty (rejected with a
// reminder); its Rationale is trimmed and may be empty; its Queries are made one line
// each, empty and repeated ones dropped, at most 8 of at most 200 bytes. Errors are
// the other methods': *CommitError, *ProfileError, the client's.
func (a *WorkflowAgent) Recover(ctx context.Context, r conversation.ArtifactRequest, failures []string) (workflow.Recovery, conversation.Usage, error) {
	if err := checkRequest(r, true); err != nil {
		return workflow.Recovery{}, conversation.Usage{}, fmt.Errorf("agents: recover: %w", err)
	}
	data := prompts.RecoveryPlanData{
		Title: r.Artifact.Title, Item: itemData(r.Item), Instructions: strings.TrimSpace(r.Instructions),
		ToolName: CommitRecoveryTool,
	}
	var shown []string
	for _, f := range failures {
		if f = textcut.BytesMark(oneLine(f), maxFailure, textcut.Truncated); f != "" {
			shown = append(shown, f)
		}
	}
	if n := len(shown); n > maxFailures {
		data.Omitted = n - maxFailures
		shown = shown[n-maxFailures:]
	}
	data.Failures = shown
	if tools, _ := a.artifactTools(ctx, r); tools != nil {
		data.Tools = promptTools(tools.Specs())
	}
	var out workflow.Recovery
	t := task{
		name: "recover", model: a.model, tool: recoveryTool(),
		prompt: prompts.RecoveryPlan, data: data, context: fullContext,
		accept: func(args json.RawMessage) (err error) {
			out, err = parseRecovery(args)
			return err
		},
		userMessage: NotSaved("new instructions for " + itemName(r)),
	}
	u, err := a.run(ctx, r, t)
	if err != nil {
		return workflow.Recovery{}, u, err
	}
	return out, u, nil
}
