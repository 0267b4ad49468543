// Package metrics is the Prometheus adapter: it owns threadwright's instruments and
// the registry they are exposed from (GET /metrics on HTTP_ADDR; docs/operations.md, "Metrics").
// It is the only package that imports Prometheus, and of threadwright's packages it
// imports only the domain, conversation.
//
// A *Metrics is made once per process (New) on a registry of its own, never on
// Prometheus's global one, so that tests that run several programs in one process
// see their own counts. Its methods are the hooks the other adapters call through
// small interfaces of their own (bot.Metrics, conversation.Metrics,
// agents.ModelMetrics, agents.ToolMetrics), which it satisfies without importing
// them: cmd/threadwright wires them together. Store and SlackClient decorate the
// store and the Slack Web API's HTTP client at their boundaries.
//
// Every label takes its values from a bounded set (see Bound): Slack methods from a
// fixed list, tools, models and workflows from what the configuration names, and
// "other" for anything else. No thread, user, channel or free text becomes a label.
//
// A nil *Metrics is valid and does nothing, which is how benchmarks measure the cost
// of the instruments.
package metrics
