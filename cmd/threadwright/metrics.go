package main

import (
	"maps"
	"slices"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/metrics"
)

// newMetrics makes the run's instruments (docs/operations.md, "Metrics"), with the labels
// bounded by the models and workflows of the configuration, and keeps them for
// GET /metrics. It returns nil, which records nothing, for a Main made to run
// without them (benchmarks).
func (m *Main) newMetrics(c Config, profiles map[string]ModelProfile, workflows *workflow.Set) *metrics.Metrics {
	if m.noMetrics {
		return nil
	}
	models := []string{c.OpenAIModel, c.OpenAISmallModel}
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		models = append(models, profiles[name].Model)
	}
	m.metrics = metrics.New(metrics.Options{Version: version, Models: models, Workflows: workflows.Names()})
	return m.metrics
}
