package main

import (
	"maps"
	"slices"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/metrics"
)

// The instruments are the hooks of every adapter (docs/architecture.md, "Packages").
var (
	_ bot.Metrics         = (*metrics.Metrics)(nil)
	_ agents.ModelMetrics = (*metrics.Metrics)(nil)
	_ agents.ToolMetrics  = (*metrics.Metrics)(nil)
)

// newMetrics makes the run's instruments (docs/operations.md, "Metrics"), with the labels
// bounded by the models, workflows and tools of the configuration, and has every
// tool of tools report its runs to them (agents.InstrumentTools): call it once every
// tool is registered.
func newMetrics(c *Config, profiles map[string]ModelProfile, workflows []string, tools *agents.Registry) *metrics.Metrics {
	models := []string{c.OpenAIModel, c.OpenAISmallModel}
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		models = append(models, profiles[name].Model)
	}
	mx := metrics.New(metrics.Options{Version: version, Models: models, Workflows: workflows, Tools: tools.Names()})
	agents.InstrumentTools(tools, mx)
	return mx
}
