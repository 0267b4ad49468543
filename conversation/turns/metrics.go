package turns

import (
	"context"
	"errors"
	"time"

	"github.com/threadwright/threadwright/conversation"
)

// noMetrics is the Metrics of a Config without one.
type noMetrics struct{}

func (noMetrics) TurnQueued(int) {}

func (noMetrics) TurnStarted(string, time.Duration) {}

func (noMetrics) TurnEnded(string, string, time.Duration) {}

func (noMetrics) PipelineItem(string, string) {}

func (noMetrics) WorkflowTransition(string, string) {}

// turnEnd is what a turn's end leaves for Metrics: the status it finished its input
// as without a save (Run.Drop), and whether its reply was a notice (Run.Finish).
type turnEnd struct {
	status     conversation.InputStatus
	notice     bool
	overBudget bool // refused by a token budget (conversation/service/budget.go)
}

// turnOutcome names how a turn under ctx ended, having returned err with end;
// shuttingDown says the runtime was shutting down.
func turnOutcome(ctx context.Context, end turnEnd, err error, shuttingDown bool) string {
	_, stopped := conversation.StoppedBy(ctx)
	switch {
	case err != nil && (errors.Is(err, conversation.ErrLeaseLost) || shuttingDown):
		return conversation.TurnAbandoned
	case err != nil:
		return conversation.TurnFailed
	case end.overBudget:
		return conversation.TurnOverBudget
	case end.status == conversation.InputDropped:
		return conversation.TurnDropped
	case end.status == conversation.InputFailed:
		return conversation.TurnFailed
	case stopped:
		return conversation.TurnStopped
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return conversation.TurnTimedOut
	case end.notice:
		return conversation.TurnFailed
	}
	return conversation.TurnAnswered
}
