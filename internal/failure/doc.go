// Package failure says what a failed turn's error came from — the model or Slack —
// from the adapters' error types, for the failure message the thread is shown
// (conversation.Config.Classify; docs/workflows.md, "Failures and Retry").
//
// The core knows only its own errors (a tool's, the store's); the types of go-openai
// (*openai.APIError, *openai.RequestError) and slack-go (slack.SlackErrorResponse,
// *slack.RateLimitedError, slack.StatusCodeError), and transport errors to the
// model's or Slack's base URL, are read here, so that neither the core nor the
// adapters (bot, agents) import each other. A Classifier gives a short detail that is
// safe to show: an HTTP status, Slack's error code, "timeout" — never a message body
// or a URL with its query.
package failure
