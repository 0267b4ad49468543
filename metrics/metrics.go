package metrics

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name.
const Namespace = "threadwright"

// Options configures New. The names bound the labels of the same name (see Bound).
type Options struct {
	// Version is the build's version, exposed as threadwright_build_info{version}.
	Version string
	// Models are the model names the configuration uses (OPENAI_MODEL,
	// OPENAI_SMALL_MODEL, MODEL_PROFILES); up to 8 more are learned as seen.
	Models []string
	// Workflows are the names of the configured workflows.
	Workflows []string
	// Tools are the names of the registered tools (built-in, MCP_CONFIG's, the
	// program's own).
	Tools []string
}

// Metrics holds every instrument of threadwright and the registry they are
// registered on. Make it with New; a nil *Metrics does nothing. Its methods are safe
// for concurrent use.
type Metrics struct {
	reg *prometheus.Registry

	models, workflows, tools *Bound

	envelopesReceived *prometheus.CounterVec   // type
	envelopesAcked    *prometheus.CounterVec   // type
	ackLatency        *prometheus.HistogramVec // type
	socketReconnects  prometheus.Counter

	turns        *prometheus.CounterVec   // kind, outcome
	turnDuration *prometheus.HistogramVec // kind, outcome
	turnsQueued  prometheus.Gauge
	turnsRunning prometheus.Gauge
	queueWait    *prometheus.HistogramVec // kind

	modelCalls    *prometheus.CounterVec   // model, outcome
	modelDuration *prometheus.HistogramVec // model
	modelRetries  *prometheus.CounterVec   // model
	modelTokens   *prometheus.CounterVec   // model, type

	toolCalls    *prometheus.CounterVec   // tool, outcome
	toolDuration *prometheus.HistogramVec // tool

	slackRequests *prometheus.CounterVec   // method, outcome
	slackDuration *prometheus.HistogramVec // method

	storeOps      *prometheus.CounterVec   // op, outcome
	storeDuration *prometheus.HistogramVec // op

	pipelineItems       *prometheus.CounterVec // workflow, outcome
	workflowTransitions *prometheus.CounterVec // workflow, event
}

// New returns the instruments of threadwright registered on a new registry, with
// the Go runtime's and the process's collectors.
func New(o Options) *Metrics {
	m := &Metrics{
		reg:       prometheus.NewRegistry(),
		models:    NewBound(8, o.Models...),
		workflows: NewBound(0, o.Workflows...),
		tools:     NewBound(0, o.Tools...),
	}
	f := factory{m.reg}
	buildInfo := f.gaugeVec("build_info", "Always 1; the version label is the build's version.", "version")
	buildInfo.WithLabelValues(o.Version).Set(1)

	m.envelopesReceived = f.counterVec("slack_envelopes_received_total",
		"Socket Mode envelopes received, by envelope type (events_api, interactive, slash_commands).", "type")
	m.envelopesAcked = f.counterVec("slack_envelopes_acked_total",
		"Socket Mode envelopes acked, by envelope type.", "type")
	m.ackLatency = f.histogramVec("slack_ack_duration_seconds",
		"Time from reading an envelope to queueing its ack (Slack's deadline is 3 s), by envelope type.",
		[]float64{.005, .01, .025, .05, .1, .25, .5, 1, 2, 3, 5}, "type")
	m.socketReconnects = f.counter("slack_socket_reconnects_total",
		"Socket Mode connections made again after the connection was lost or Slack asked for a new one.")

	m.turns = f.counterVec("turns_total",
		"Turns ended, by input kind and outcome (answered, stopped, failed, timed_out, dropped, abandoned, over_budget).", "kind", "outcome")
	m.turnDuration = f.histogramVec("turn_duration_seconds",
		"Duration of a turn, from taking its input to its last write, by input kind and outcome.",
		[]float64{.1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300}, "kind", "outcome")
	m.turnsQueued = f.gauge("turns_queued", "Threads with an input waiting for a free turn slot (MAX_CONCURRENT_TURNS) in this process.")
	m.turnsRunning = f.gauge("turns_running", "Turns running in this process.")
	m.queueWait = f.histogramVec("turn_queue_wait_seconds",
		"Time from storing an input to starting its first turn, by input kind.",
		[]float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300}, "kind")

	m.modelCalls = f.counterVec("model_calls_total",
		"Chat completion calls, by model and outcome (ok, empty, timeout, canceled, error).", "model", "outcome")
	m.modelDuration = f.histogramVec("model_call_duration_seconds",
		"Duration of a chat completion call, retries and their waits included, by model.",
		[]float64{.1, .25, .5, 1, 2, 5, 10, 20, 30, 60, 120}, "model")
	m.modelRetries = f.counterVec("model_retries_total",
		"Chat completion attempts after the first (HTTP 429, 5xx, timeouts, broken streams), by model.", "model")
	m.modelTokens = f.counterVec("model_tokens_total",
		"Tokens used by chat completions as the API reports them, by model and type (prompt, completion).", "model", "type")

	m.toolCalls = f.counterVec("tool_calls_total",
		"Tool calls run, by tool and outcome (ok, error, timeout, canceled, panic).", "tool", "outcome")
	m.toolDuration = f.histogramVec("tool_call_duration_seconds", "Duration of a tool call, by tool.",
		[]float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}, "tool")

	m.slackRequests = f.counterVec("slack_api_requests_total",
		"Slack Web API HTTP requests, retries included, by method and outcome (ok, error, rate_limited, http_error, network_error).", "method", "outcome")
	m.slackDuration = f.histogramVec("slack_api_request_duration_seconds", "Duration of a Slack Web API HTTP request, by method.",
		[]float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10}, "method")

	m.storeOps = f.counterVec("store_operations_total",
		"Store operations, by operation and outcome (ok, not_found, conflict, lease_lost, unavailable, canceled, error).", "op", "outcome")
	m.storeDuration = f.histogramVec("store_operation_duration_seconds", "Duration of a store operation, by operation.",
		[]float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5}, "op")

	m.pipelineItems = f.counterVec("pipeline_items_total",
		"Pipeline items ended or retried, by workflow and outcome (done, failed, retried).", "workflow", "outcome")
	m.workflowTransitions = f.counterVec("workflow_transitions_total",
		"Workflow state changes, by workflow and event (started, completed, cancelled, or the status an artifact moved to).", "workflow", "event")

	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Registry returns the registry the instruments are registered on (nil for a nil
// Metrics).
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Handler serves the registry in the Prometheus exposition format (text, or
// OpenMetrics when the scraper asks for it); errors of a collector go to log.
func (m *Metrics) Handler(log *slog.Logger) http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		ErrorHandling:     promhttp.ContinueOnError,
		Registry:          m.reg, // promhttp_metric_handler_errors_total
		EnableOpenMetrics: true,
	})
}

// factory makes instruments named threadwright_<name> and registers them.
type factory struct{ reg prometheus.Registerer }

func (f factory) counter(name, help string) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help})
	f.reg.MustRegister(c)
	return c
}

func (f factory) counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	f.reg.MustRegister(c)
	return c
}

func (f factory) gauge(name, help string) prometheus.Gauge {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help})
	f.reg.MustRegister(g)
	return g
}

func (f factory) gaugeVec(name, help string, labels ...string) *prometheus.GaugeVec {
	g := prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: Namespace, Name: name, Help: help}, labels)
	f.reg.MustRegister(g)
	return g
}

func (f factory) histogramVec(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: Namespace, Name: name, Help: help, Buckets: buckets}, labels)
	f.reg.MustRegister(h)
	return h
}

// seconds returns d in seconds, for a histogram.
func seconds(d time.Duration) float64 { return d.Seconds() }
