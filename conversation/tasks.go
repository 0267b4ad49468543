package conversation

import (
	"context"
)

// TaskStatus is a thinking step's state (Slack's task_update status).
type TaskStatus string

// The statuses of a Task, in the order a task goes through them.
const (
	TaskPending    TaskStatus = "pending"
	TaskInProgress TaskStatus = "in_progress"
	TaskComplete   TaskStatus = "complete"
	TaskError      TaskStatus = "error"
)

// Source is where a task's result came from: a page, a search result, a document's
// heading. URL is empty when the source has none (Slack then gets no link).
type Source struct {
	URL  string
	Text string
}

// Bounds of a task's text as shown, in characters (Slack shows a task's title on one
// line and cuts its output at 256 characters): a task's title, its sources' texts and
// a plan's title are cut to MaxTaskTitle, its output to MaxTaskOutput, after they are
// scrubbed of secrets (Config.Redact), so that no part of a cut secret shows.
const (
	MaxTaskTitle  = 100
	MaxTaskOutput = 200
)

// Task is one thinking step of a turn, shown while it runs (docs/architecture.md,
// "Assistant pipeline"): a tool call, or a planner phase or plan task. Each update
// names the task by ID and carries its whole current state.
type Task struct {
	ID     string
	Title  string
	Status TaskStatus
	// Output is a short result (a line, at most a few hundred characters).
	Output  string
	Sources []Source
}

// TaskSink receives a turn's thinking steps as they advance (Prompt.Tasks). Calls
// may come from several goroutines; UpdateTasks returns at once whatever Slack says.
type TaskSink interface {
	// Plan says that the tasks of this turn form a plan titled title (Slack's
	// task_display_mode plan): called before the first UpdateTasks, or again to
	// rename the plan.
	Plan(title string)
	// UpdateTasks shows tasks, each a new task or the next state of one already
	// shown, in one call to Slack.
	UpdateTasks(tasks ...Task)
}

// TaskStreamOptions are the options of a stream that shows tasks.
type TaskStreamOptions struct {
	// Plan groups the tasks under PlanTitle (task_display_mode plan) rather than
	// showing them as a timeline.
	Plan      bool
	PlanTitle string
	// Card, when it has blocks, is shown first in the message (a Stop button).
	Card Card
}

// TaskStreamingMessenger is a StreamingMessenger whose streams can show tasks
// (Slack's task_update chunks). An error from StartTaskStream or UpdateTasks means
// Slack refused them: the turn shows its progress in a separate message instead.
type TaskStreamingMessenger interface {
	StreamingMessenger
	StartTaskStream(ctx context.Context, key Key, userID string, tag Tag, opts TaskStreamOptions) (TaskStream, error)
}

// TaskStream is a Stream that also shows tasks.
type TaskStream interface {
	Stream
	// UpdateTasks appends the tasks' new states (and the plan's new title when
	// planTitle is not empty) to the message.
	UpdateTasks(ctx context.Context, planTitle string, tasks ...Task) error
}
