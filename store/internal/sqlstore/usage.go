package sqlstore

import (
	"fmt"

	"github.com/threadwright/threadwright/conversation"
)

// UsageCols are the columns of the token_usage table (migration 00010), in
// UsageArgs's order.
const UsageCols = `created_at, team_id, channel_id, thread_ts, user_id, workflow, model, turns, prompt_tokens, completion_tokens`

// UsageRow is a row of the token_usage table, with its timestamp of type T.
type UsageRow[T Time] struct {
	CreatedAt        T      `db:"created_at"`
	TeamID           string `db:"team_id"`
	ChannelID        string `db:"channel_id"`
	ThreadTS         string `db:"thread_ts"`
	UserID           string `db:"user_id"`
	Workflow         string `db:"workflow"`
	Model            string `db:"model"`
	Turns            int    `db:"turns"`
	PromptTokens     int    `db:"prompt_tokens"`
	CompletionTokens int    `db:"completion_tokens"`
}

// UsageArgs returns the values of r's row, in UsageCols's order, its key the turn's
// (r.Key may be left empty) and its time at.
func UsageArgs[T Time](k conversation.Key, r conversation.UsageRecord, at T) []any {
	return []any{at, k.TeamID, k.ChannelID, k.ThreadTS, r.UserID, r.Workflow, r.Model, r.Turns,
		r.PromptTokens, r.CompletionTokens}
}

// UsageList returns rows as conversation.UsageRecord values, in order, times in UTC.
func UsageList[T Time](rows []UsageRow[T]) []conversation.UsageRecord {
	out := make([]conversation.UsageRecord, len(rows))
	for i, r := range rows {
		out[i] = conversation.UsageRecord{
			Key:    conversation.Key{TeamID: r.TeamID, ChannelID: r.ChannelID, ThreadTS: r.ThreadTS},
			UserID: r.UserID, Workflow: r.Workflow, Model: r.Model, Turns: r.Turns,
			PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens, At: r.CreatedAt.UTC(),
		}
	}
	return out
}

// UsageGroupColumn returns the token_usage column a report by by groups on.
func UsageGroupColumn(by conversation.UsageBy) (string, error) {
	switch by {
	case conversation.UsageByChannel:
		return "channel_id", nil
	case conversation.UsageByUser:
		return "user_id", nil
	case conversation.UsageByWorkflow:
		return "workflow", nil
	case conversation.UsageByModel:
		return "model", nil
	}
	return "", fmt.Errorf("usage report: unknown grouping %q (want channel, user, workflow or model)", by)
}

// UsageReportSQL returns the query of a usage report grouped on col and model, its
// one parameter (the start time) written as param ("?" or "$1").
func UsageReportSQL(col, param string) string {
	group := col + `, model`
	if col == "model" {
		group = col
	}
	return `SELECT ` + col + ` AS grp, model, SUM(turns) AS turns, SUM(prompt_tokens) AS prompt_tokens,
		SUM(completion_tokens) AS completion_tokens
		FROM token_usage WHERE created_at >= ` + param + `
		GROUP BY ` + group + `
		ORDER BY SUM(prompt_tokens) + SUM(completion_tokens) DESC, ` + group
}

// UsageTotalRow is a row of UsageReportSQL's result.
type UsageTotalRow struct {
	Group            string `db:"grp"`
	Model            string `db:"model"`
	Turns            int64  `db:"turns"`
	PromptTokens     int64  `db:"prompt_tokens"`
	CompletionTokens int64  `db:"completion_tokens"`
}

// UsageTotals returns rows as conversation.UsageTotal values, in order.
func UsageTotals(rows []UsageTotalRow) []conversation.UsageTotal {
	out := make([]conversation.UsageTotal, len(rows))
	for i, r := range rows {
		out[i] = conversation.UsageTotal(r)
	}
	return out
}
