package main

import (
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"

	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/internal/redact"
	"github.com/threadwright/threadwright/internal/tracing"
)

// redactor returns the Redactor of every secret value the configuration holds: the
// Slack tokens, OPENAI_API_KEY, the password of DATABASE_URL (and of SEARXNG_URL), the
// web search keys (BRAVE_SEARCH_API_KEY, TAVILY_API_KEY), the webhook secrets
// (WEBHOOK_SECRET and each WEBHOOK_URLS entry's own),
// each MODEL_PROFILES api_key, and each MCP server's header and environment values
// and URL password (docs/operations.md, "Limits and secrets"). A header value such as
// "Bearer <token>" is also scrubbed word by word, so that the token alone is found
// too. Values shorter than redact.MinLength are ignored.
func (c *Config) redactor(mcpCfg mcp.Config, profiles map[string]ModelProfile) *redact.Redactor {
	secrets := []string{c.SlackBotToken, c.SlackAppToken, c.OpenAIAPIKey, urlPassword(c.DatabaseURL), urlPassword(c.SearxngURL), c.BraveAPIKey, c.TavilyAPIKey, c.MetricsToken}
	secrets = append(secrets, c.webhookSecrets()...)
	for _, p := range profiles {
		secrets = append(secrets, p.APIKey)
	}
	if tokens, err := api.ParseTokens(c.APITokens); err == nil {
		for _, t := range tokens {
			secrets = append(secrets, t.Secret)
		}
	}
	secrets = append(secrets, otlpSecrets(c.OTLPEndpoint, c.OTLPTracesEndpoint)...)
	for _, s := range mcpCfg.Servers {
		secrets = append(secrets, urlPassword(s.URL))
		for _, m := range []map[string]string{s.Headers, s.Env} {
			for _, v := range m {
				secrets = append(secrets, v)
				secrets = append(secrets, strings.Fields(v)...)
			}
		}
	}
	return redact.New(secrets...)
}

// otlpSecrets returns the secrets of the OTLP exporter's settings: the user
// information and query values of the endpoints, and the values of
// OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS (key=value pairs,
// comma-separated, values URL-encoded, as the OTel SDK reads them), raw, decoded and
// word by word ("Bearer <token>").
func otlpSecrets(endpoints ...string) []string {
	var out []string
	for _, e := range endpoints {
		u, err := url.Parse(e)
		if err != nil {
			continue
		}
		if u.User != nil {
			p, _ := u.User.Password()
			out = append(out, u.User.Username(), p)
		}
		for _, vs := range u.Query() {
			out = append(out, vs...)
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, pair := range strings.Split(os.Getenv(name), ",") {
			_, v, ok := strings.Cut(pair, "=")
			if !ok {
				continue
			}
			v = strings.TrimSpace(v)
			out = append(out, v)
			if dec, err := url.QueryUnescape(v); err == nil {
				out = append(out, dec)
				out = append(out, strings.Fields(dec)...)
			}
		}
	}
	return out
}

// urlPassword returns the password of raw's user information ("" for none).
func urlPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}

// logger is the logger of the subcommands that only open the store (migrate,
// ingest): info and up, as text, with the database password scrubbed.
func (c StoreConfig) logger(w io.Writer) *slog.Logger {
	return slog.New(redact.NewHandler(newLogger(w, "info", "text").Handler(), redact.New(urlPassword(c.DatabaseURL))))
}

// newLogger returns the slog logger for level and format (validated by Config).
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var l slog.Level
	_ = l.UnmarshalText([]byte(level))
	opts := &slog.HandlerOptions{Level: l}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// runLogger returns the logger of a run: base, or when nil one made from LOG_LEVEL
// and LOG_FORMAT writing to w, with every line scrubbed of the secrets redactor
// knows (docs/operations.md, "Limits and secrets") and given the trace and span ids of its
// context (docs/operations.md, "Traces").
func runLogger(base *slog.Logger, w io.Writer, c *Config, redactor *redact.Redactor) *slog.Logger {
	if base == nil {
		base = newLogger(w, c.LogLevel, c.LogFormat)
	}
	return slog.New(tracing.NewLogHandler(redact.NewHandler(base.Handler(), redactor)))
}
