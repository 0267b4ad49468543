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

// metrics returns Config.Metrics, or one that does nothing.
func (s *Runtime) metrics() conversation.Metrics {
	if s.cfg.Metrics == nil {
		return noMetrics{}
	}
	return s.cfg.Metrics
}

// turnEnd is what a turn's end leaves for Metrics: the status it finished its input
// as without a save (finish), and whether its reply was a notice (finishTurn).
type turnEnd struct {
	status     conversation.InputStatus
	notice     bool
	overBudget bool // refused by a token budget (conversation/service/budget.go)
}

// waitSlot waits for a turn slot, counted as queued meanwhile. It reports false when
// the service shuts down first.
func (s *Runtime) waitSlot() bool {
	s.metrics().TurnQueued(1)
	defer s.metrics().TurnQueued(-1)
	return s.turns.Acquire(s.ctx, 1) == nil
}

// turnStarted tells Metrics that r's turn started at start.
func (s *Runtime) turnStarted(r *Run, start time.Time) {
	wait := time.Duration(-1)
	if r.In.Attempts <= 1 && !r.In.CreatedAt.IsZero() {
		wait = max(start.Sub(r.In.CreatedAt), 0)
	}
	s.metrics().TurnStarted(string(r.In.Kind), wait)
}

// turnEnded tells Metrics that r's turn, started at start under ctx, returned err.
func (s *Runtime) turnEnded(ctx context.Context, r *Run, start time.Time, err error) {
	s.metrics().TurnEnded(string(r.In.Kind), s.turnOutcome(ctx, r, err), s.cfg.Now().Sub(start))
}

// turnOutcome names how r's turn under ctx ended, having returned err.
func (s *Runtime) turnOutcome(ctx context.Context, r *Run, err error) string {
	_, stopped := conversation.StoppedBy(ctx)
	switch {
	case err != nil && (errors.Is(err, conversation.ErrLeaseLost) || s.ctx.Err() != nil):
		return conversation.TurnAbandoned
	case err != nil:
		return conversation.TurnFailed
	case r.end.overBudget:
		return conversation.TurnOverBudget
	case r.end.status == conversation.InputDropped:
		return conversation.TurnDropped
	case r.end.status == conversation.InputFailed:
		return conversation.TurnFailed
	case stopped:
		return conversation.TurnStopped
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return conversation.TurnTimedOut
	case r.end.notice:
		return conversation.TurnFailed
	}
	return conversation.TurnAnswered
}
