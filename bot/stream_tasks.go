package bot

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

var (
	_ conversation.TaskStreamingMessenger = (*Messenger)(nil)
	_ conversation.TaskStreamingMessenger = (*SigningMessenger)(nil)
)

// StartTaskStream is StartStream for a stream that shows tasks (thinking steps):
// chat.startStream with task_display_mode ("plan" with opts.Plan, else "timeline"),
// a plan_update chunk naming the plan, and opts.Card, rendered as one message's
// blocks (RenderCard), as a blocks chunk before anything else (the Stop button).
// Errors: Slack's (an older workspace refuses the chunks or the display mode); the
// turn then shows its progress in a separate message.
func (m *Messenger) StartTaskStream(ctx context.Context, key conversation.Key, userID string, tag conversation.Tag, opts conversation.TaskStreamOptions) (conversation.TaskStream, error) {
	mode := slack.TaskDisplayModeTimeline
	if opts.Plan {
		mode = slack.TaskDisplayModePlan
	}
	var chunks []slack.StreamChunk
	if opts.Plan && opts.PlanTitle != "" {
		chunks = append(chunks, slack.NewPlanUpdateChunk(DefuseMentions(opts.PlanTitle)))
	}
	if len(opts.Card.Blocks) > 0 {
		rendered, err := RenderCard(opts.Card, 1)
		if err != nil {
			return nil, fmt.Errorf("chat.startStream: %w", err)
		}
		chunks = append(chunks, slack.NewBlocksChunk(rendered[0].Blocks...))
	}
	extra := []slack.MsgOption{slack.MsgOptionTaskDisplayMode(mode)}
	if len(chunks) > 0 {
		extra = append(extra, slack.MsgOptionChunks(chunks...))
	}
	st, err := m.startStream(ctx, key, userID, tag, extra...)
	if err != nil {
		return nil, err
	}
	return taskStream{st}, nil
}

// StartTaskStream is Messenger.StartTaskStream with the card's actions signed and,
// for an answer, the feedback buttons added by its final Stop.
func (m *SigningMessenger) StartTaskStream(ctx context.Context, key conversation.Key, userID string, tag conversation.Tag, opts conversation.TaskStreamOptions) (conversation.TaskStream, error) {
	opts.Card = m.signer.SignCard(opts.Card)
	st, err := m.Messenger.StartTaskStream(ctx, key, userID, tag, opts)
	if err != nil || !tag.Answer {
		return st, err
	}
	if ts, ok := st.(taskStream); ok {
		m.endWithFeedback(ts.stream, key)
	}
	return st, nil
}

// taskStream is a stream that also shows tasks.
type taskStream struct {
	*stream
}

// UpdateTasks appends a task_update chunk for each task, after a plan_update chunk
// when planTitle is not empty, with chat.appendStream.
func (s taskStream) UpdateTasks(ctx context.Context, planTitle string, tasks ...conversation.Task) error {
	chunks := TaskChunks(planTitle, tasks...)
	if len(chunks) == 0 {
		return nil
	}
	if err := s.rotateIfOld(ctx); err != nil {
		return err
	}
	if _, _, err := s.api.AppendStreamContext(ctx, s.channel, s.ts, slack.MsgOptionChunks(chunks...)); err != nil {
		return fmt.Errorf("chat.appendStream: %w", err)
	}
	return nil
}

// TaskChunks returns the chunks that show tasks: a plan_update chunk when planTitle
// is not empty, then one task_update chunk per task, its sources those with both a
// URL and a text (Slack refuses others), its special mentions defused.
func TaskChunks(planTitle string, tasks ...conversation.Task) []slack.StreamChunk {
	var chunks []slack.StreamChunk
	if planTitle != "" {
		chunks = append(chunks, slack.NewPlanUpdateChunk(DefuseMentions(planTitle)))
	}
	for _, t := range tasks {
		c := slack.NewTaskUpdateChunk(t.ID, DefuseMentions(t.Title))
		c.Status = slack.TaskCardStatus(t.Status)
		c.Output = DefuseMentions(t.Output)
		for _, src := range t.Sources {
			if src.URL != "" && src.Text != "" {
				c.Sources = append(c.Sources, slack.NewTaskCardSource(src.URL, DefuseMentions(src.Text)))
			}
		}
		chunks = append(chunks, c)
	}
	return chunks
}
