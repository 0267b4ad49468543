package metrics

import "time"

// ObserveStore records a store operation as the Store decorator does.
func ObserveStore(m *Metrics, op string, err error, d time.Duration) {
	if m == nil {
		return
	}
	m.storeOps.WithLabelValues(op, storeOutcome(err)).Inc()
	m.storeDuration.WithLabelValues(op).Observe(seconds(d))
}

// ObserveSlack records a Slack request as SlackClient's transport does.
func ObserveSlack(m *Metrics, method, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.slackRequests.WithLabelValues(slackMethod("/api/"+method), outcome).Inc()
	m.slackDuration.WithLabelValues(slackMethod("/api/" + method)).Observe(seconds(d))
}
