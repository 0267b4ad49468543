package metrics

import "time"

// Fixed label sets. Values outside them are counted as Other.
var (
	envelopeTypes = NewBound(0, "events_api", "interactive", "slash_commands")
	inputKinds    = NewBound(0, "user_message", "action", "command", "pipeline", "assistant_thread")
	turnOutcomes  = NewBound(0, "answered", "stopped", "failed", "timed_out", "dropped", "abandoned", "over_budget")
	modelOutcomes = NewBound(0, "ok", "empty", "timeout", "canceled", "error")
	itemOutcomes  = NewBound(0, "done", "failed", "retried")
	// workflowEvents are a run's start and end, and the artifact statuses of
	// conversation/workflow (docs/architecture.md, "Workflow machine").
	workflowEvents = NewBound(0, "started", "completed", "cancelled", "reopened",
		"pending", "options_generated", "option_selected", "generated", "approved", "stale", "running")
)

// EnvelopeReceived counts a Socket Mode envelope read from the connection
// (bot.Metrics).
func (m *Metrics) EnvelopeReceived(envelopeType string) {
	if m == nil {
		return
	}
	m.envelopesReceived.WithLabelValues(envelopeTypes.Value(envelopeType)).Inc()
}

// EnvelopeAcked counts an envelope's ack, latency after it was read (bot.Metrics).
func (m *Metrics) EnvelopeAcked(envelopeType string, latency time.Duration) {
	if m == nil {
		return
	}
	t := envelopeTypes.Value(envelopeType)
	m.envelopesAcked.WithLabelValues(t).Inc()
	m.ackLatency.WithLabelValues(t).Observe(seconds(latency))
}

// SocketReconnected counts a Socket Mode connection made again (bot.Metrics).
func (m *Metrics) SocketReconnected() {
	if m == nil {
		return
	}
	m.socketReconnects.Inc()
}

// TurnQueued moves the gauge of threads waiting for a turn slot by delta
// (conversation.Metrics).
func (m *Metrics) TurnQueued(delta int) {
	if m == nil {
		return
	}
	m.turnsQueued.Add(float64(delta))
}

// TurnStarted counts a running turn of an input of kind; wait, when not negative, is
// how long the input waited for its first turn (conversation.Metrics).
func (m *Metrics) TurnStarted(kind string, wait time.Duration) {
	if m == nil {
		return
	}
	m.turnsRunning.Inc()
	if wait >= 0 {
		m.queueWait.WithLabelValues(inputKinds.Value(kind)).Observe(seconds(wait))
	}
}

// TurnEnded counts a turn that ended with outcome after d (conversation.Metrics).
func (m *Metrics) TurnEnded(kind, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.turnsRunning.Dec()
	k, o := inputKinds.Value(kind), turnOutcomes.Value(outcome)
	m.turns.WithLabelValues(k, o).Inc()
	m.turnDuration.WithLabelValues(k, o).Observe(seconds(d))
}

// PipelineItem counts a pipeline item of workflow that ended (done, failed) or was
// tried again (retried) (conversation.Metrics).
func (m *Metrics) PipelineItem(workflow, outcome string) {
	if m == nil {
		return
	}
	m.pipelineItems.WithLabelValues(m.workflows.Value(workflow), itemOutcomes.Value(outcome)).Inc()
}

// WorkflowTransition counts a change of a run of workflow: started, completed,
// cancelled, reopened, or an artifact's new status (conversation.Metrics).
func (m *Metrics) WorkflowTransition(workflow, event string) {
	if m == nil {
		return
	}
	m.workflowTransitions.WithLabelValues(m.workflows.Value(workflow), workflowEvents.Value(event)).Inc()
}

// ModelCall counts a chat completion call to model that ended with outcome after d,
// with retries attempts after the first and the tokens the API reported
// (agents.ModelMetrics).
func (m *Metrics) ModelCall(model, outcome string, d time.Duration, retries, promptTokens, completionTokens int) {
	if m == nil {
		return
	}
	name := m.models.Value(model)
	m.modelCalls.WithLabelValues(name, modelOutcomes.Value(outcome)).Inc()
	m.modelDuration.WithLabelValues(name).Observe(seconds(d))
	if retries > 0 {
		m.modelRetries.WithLabelValues(name).Add(float64(retries))
	}
	if promptTokens > 0 {
		m.modelTokens.WithLabelValues(name, "prompt").Add(float64(promptTokens))
	}
	if completionTokens > 0 {
		m.modelTokens.WithLabelValues(name, "completion").Add(float64(completionTokens))
	}
}
