package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/threadwright/threadwright/internal/redact"
	"github.com/threadwright/threadwright/internal/tracing"
)

// TraceConfig is the tracing part of Config (docs/operations.md, "Traces"). The OTLP exporter
// reads the other standard OTEL_* variables itself (headers, timeout, compression,
// certificates, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER).
type TraceConfig struct {
	OTLPEndpoint       string `envconfig:"OTEL_EXPORTER_OTLP_ENDPOINT" desc:"Base URL of an OTLP/HTTP collector, such as http://otel-collector:4318: set, every turn is traced and its spans are sent to <URL>/v1/traces (docs/operations.md, \"Traces\"). Unset, tracing is off"`
	OTLPTracesEndpoint string `envconfig:"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" desc:"The full URL of traces (http://otel-collector:4318/v1/traces), instead of OTEL_EXPORTER_OTLP_ENDPOINT"`
	TraceContent       string `envconfig:"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" default:"false" desc:"true (or SPAN_ONLY) records prompts, completions, tool arguments and results, and error texts on spans, scrubbed of the configured secrets first. false (or NO_CONTENT) never does"`
}

// checks are the validity checks of c, as Config.validate makes them.
func (c TraceConfig) checks() []envCheck {
	return []envCheck{
		{c.OTLPEndpoint == "" || isHTTPURL(c.OTLPEndpoint), "OTEL_EXPORTER_OTLP_ENDPOINT", "an http(s) URL of an OTLP/HTTP collector such as http://otel-collector:4318"},
		{c.OTLPTracesEndpoint == "" || isHTTPURL(c.OTLPTracesEndpoint), "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "an http(s) URL such as http://otel-collector:4318/v1/traces"},
		{validContentSetting(c.TraceContent), "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true, false, SPAN_ONLY or NO_CONTENT"},
	}
}

// validContentSetting reports whether v is a value of
// OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT.
func validContentSetting(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "", "true", "false", "1", "0", "span_only", "span_and_event", "no_content":
		return true
	}
	return false
}

// recordContent reports whether OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT opts in.
func (c TraceConfig) recordContent() bool {
	switch strings.ToLower(strings.TrimSpace(c.TraceContent)) {
	case "true", "1", "span_only", "span_and_event":
		return true
	}
	return false
}

// traceShutdownTimeout bounds the flush of the spans still buffered on the way out.
const traceShutdownTimeout = 5 * time.Second

// startTracing starts tracing as c says (tracing.Setup), recorded content scrubbed by
// redactor, export errors logged to log; stop flushes the spans left, within
// traceShutdownTimeout.
func startTracing(ctx context.Context, c TraceConfig, redactor *redact.Redactor, log *slog.Logger) (stop func(), err error) {
	cfg := tracing.Config{
		ServiceVersion: version,
		RecordContent:  c.recordContent(),
		Redact:         redactor.String,
		Getenv: func(name string) string {
			switch name {
			case "OTEL_EXPORTER_OTLP_ENDPOINT":
				return c.OTLPEndpoint
			case "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT":
				return c.OTLPTracesEndpoint
			}
			return os.Getenv(name)
		},
		OnError: func(err error) { log.Warn("trace export failed", "error", err) },
	}
	shutdown, err := tracing.Setup(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Enabled() {
		log.Info("tracing on: spans exported over OTLP/HTTP", "endpoint", redact.URL(firstSet(c.OTLPTracesEndpoint, c.OTLPEndpoint)), "record_content", cfg.RecordContent)
	}
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), traceShutdownTimeout)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			log.Warn("trace flush cut short; the last spans may be lost", "error", err)
		}
	}, nil
}

func firstSet(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}
