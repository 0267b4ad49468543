package service

import (
	"context"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
)

// cutTask returns text scrubbed by redact, then cut to n characters, ending with "…"
// when cut.
func cutTask(redact func(string) string, text string, n int) string {
	text = redact(text)
	if utf8.RuneCountInString(text) <= n {
		return text
	}
	return string([]rune(text)[:n-1]) + "…"
}

// redactingTaskStreamer is a redactingStreamer of a TaskStreamingMessenger: the
// tasks' titles, outputs and source texts, the plan's title and the first card are
// scrubbed too (a task's output quotes what a tool returned).
type redactingTaskStreamer struct {
	redactingStreamer
	tm conversation.TaskStreamingMessenger
}

var _ conversation.TaskStreamingMessenger = redactingTaskStreamer{}

func (m redactingTaskStreamer) StartTaskStream(ctx context.Context, key conversation.Key, userID string, tag conversation.Tag, opts conversation.TaskStreamOptions) (conversation.TaskStream, error) {
	opts.PlanTitle, opts.Card = m.redact(opts.PlanTitle), m.card(opts.Card)
	st, err := m.tm.StartTaskStream(ctx, key, userID, tag, opts)
	if err != nil {
		return nil, err
	}
	return redactingTaskStream{redactingStream: redactingStream{Stream: st, redact: m.redact}, ts: st}, nil
}

// redactingTaskStream scrubs each task and plan title it is given.
type redactingTaskStream struct {
	redactingStream
	ts conversation.TaskStream
}

func (s redactingTaskStream) UpdateTasks(ctx context.Context, planTitle string, tasks ...conversation.Task) error {
	out := make([]conversation.Task, len(tasks))
	for i, t := range tasks {
		t.Title, t.Output = s.redact(t.Title), s.redact(t.Output)
		srcs := make([]conversation.Source, len(t.Sources))
		for j, src := range t.Sources {
			srcs[j] = conversation.Source{URL: s.redact(src.URL), Text: s.redact(src.Text)}
		}
		if t.Sources == nil {
			srcs = nil
		}
		t.Sources = srcs
		out[i] = t
	}
	return s.ts.UpdateTasks(ctx, s.redact(planTitle), out...)
}
