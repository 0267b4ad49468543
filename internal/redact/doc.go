// Package redact scrubs configured secret values out of text: log records and the
// error texts the bot shows in Slack (docs/operations.md, "Limits and secrets").
//
// A Redactor holds the process's secret values (Slack tokens, model API keys, MCP
// header and environment values, the database password) and replaces each occurrence
// of one, raw, URL-escaped or JSON-escaped, with "[REDACTED]". Handler wraps a slog.Handler so that
// every record of the process passes through it: its message and every attribute
// value (strings, errors, fmt.Stringers, LogValuer results, nested groups, and any
// other value whose printed form holds a secret).
//
// Values shorter than MinLength characters are ignored: a short value (a port, "demo",
// "true") would scrub ordinary words out of every log line, and is no secret worth the
// name.
package redact
