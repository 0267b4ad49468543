// Package tracing sets up OpenTelemetry tracing for threadwright and holds the small
// helpers the instrumented packages share (docs/operations.md, "Traces"; docs/architecture.md,
// "Traces").
//
// Setup installs a TracerProvider that exports spans over OTLP/HTTP when the standard
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set, and
// leaves the global no-op provider in place otherwise, so that instrumented code costs
// next to nothing. The instrumented packages start their spans with Start (or Child,
// for work that is traced only inside a turn) on the global provider:
//
//   - conversation: one root span per turn, and spans for the scope check and the
//     store calls the turn makes;
//   - agents: one span per chat completion, following the OpenTelemetry GenAI
//     semantic conventions (gen_ai.* attributes), and one per tool call;
//   - cmd/threadwright: the Slack Web API calls, through HTTPClient.
//
// Prompts, completions, tool arguments and results, and error texts are recorded
// only when Config.RecordContent opts in (Content reports it), and then only after
// Config.Redact has scrubbed them. LogHandler and Logger put the trace and span ids
// into log lines, so that a turn's logs and its trace find each other.
package tracing
