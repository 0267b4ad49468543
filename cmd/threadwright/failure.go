package main

import (
	"context"
	"errors"
	"net/url"
	"strconv"
	"strings"

	"github.com/sashabaranov/go-openai"
	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
)

// failureClassifier says what a failed turn's error came from (the model or Slack),
// for the failure message the thread is shown (service.Config.Classify; docs/workflows.md,
// "Failures and Retry"). It reads the adapters' error types, which is wiring: the
// core knows only its own errors (a tool's, the store's), and the adapters (bot,
// agents) never import each other, so the types of go-openai (*openai.APIError,
// *openai.RequestError), slack-go (slack.SlackErrorResponse, *slack.RateLimitedError,
// slack.StatusCodeError) and agents' sentinel errors meet here, with transport errors
// to the model's or Slack's base URL. Its detail is safe to show: an HTTP status,
// Slack's error code, "timeout", never a message body or a URL with its query.
type failureClassifier struct {
	// modelBases are the base URLs of the model endpoints (OPENAI_BASE_URL and the
	// model profiles'): a transport error to one of them is the model's.
	modelBases []string
	// slackBase is the Slack Web API's base URL (SLACK_API_URL).
	slackBase string
}

var _ conversation.Classifier = failureClassifier{}.Classify

// Classify returns what err came from, or a Failure with CauseUnknown. Checked in
// order: go-openai's errors and the agents' model errors (model); slack-go's
// (Slack); a *url.Error to a model URL (model) or the Slack URL (Slack).
func (c failureClassifier) Classify(err error) conversation.Failure {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var slackErr slack.SlackErrorResponse
	var slackPtr *slack.SlackErrorResponse
	var limited *slack.RateLimitedError
	var status slack.StatusCodeError
	var urlErr *url.Error
	switch {
	case errors.As(err, &apiErr):
		f := modelFailure(apiErr.HTTPStatusCode)
		f.Message = apiErr.Message
		return f
	case errors.As(err, &reqErr):
		return modelFailure(reqErr.HTTPStatusCode)
	case errors.Is(err, agents.ErrTimeout):
		return conversation.Failure{Cause: conversation.CauseModel, Detail: "timeout"}
	case errors.Is(err, agents.ErrEmptyResponse):
		return conversation.Failure{Cause: conversation.CauseModel, Detail: "empty answer"}
	case errors.As(err, &slackErr):
		return conversation.Failure{Cause: conversation.CauseSlack, Detail: slackCode(slackErr.Err)}
	case errors.As(err, &slackPtr):
		return conversation.Failure{Cause: conversation.CauseSlack, Detail: slackCode(slackPtr.Err)}
	case errors.As(err, &limited):
		return conversation.Failure{Cause: conversation.CauseSlack, Detail: "rate limited"}
	case errors.As(err, &status):
		return conversation.Failure{Cause: conversation.CauseSlack, Detail: "HTTP " + strconv.Itoa(status.Code)}
	case errors.As(err, &urlErr):
		f := conversation.Failure{Detail: transportDetail(urlErr)}
		switch {
		case urlUnder(urlErr.URL, c.slackBase):
			f.Cause = conversation.CauseSlack
		case urlUnderAny(urlErr.URL, c.modelBases):
			f.Cause = conversation.CauseModel
		default:
			return conversation.Failure{}
		}
		return f
	}
	return conversation.Failure{}
}

// modelFailure is a model failure with HTTP status code (0: none, an error inside a
// stream).
func modelFailure(code int) conversation.Failure {
	f := conversation.Failure{Cause: conversation.CauseModel}
	if code != 0 {
		f.Detail = "HTTP " + strconv.Itoa(code)
	}
	return f
}

// slackCode is Slack's error code when it looks like one ("msg_too_long"), or "".
func slackCode(s string) string {
	if s == "" || len(s) > 60 {
		return ""
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_') {
			return ""
		}
	}
	return s
}

// transportDetail says in a word how a request failed without an HTTP response: it
// timed out, or the server could not be reached.
func transportDetail(e *url.Error) string {
	if e.Timeout() || errors.Is(e, context.DeadlineExceeded) {
		return "timeout"
	}
	return "unreachable"
}

// urlUnder reports whether target is base or below it (scheme, host and path prefix).
func urlUnder(target, base string) bool {
	if base == "" {
		return false
	}
	t, err1 := url.Parse(target)
	b, err2 := url.Parse(base)
	if err1 != nil || err2 != nil || t.Host == "" {
		return false
	}
	return t.Scheme == b.Scheme && strings.EqualFold(t.Host, b.Host) && strings.HasPrefix(t.Path, strings.TrimSuffix(b.Path, "/"))
}

// urlUnderAny reports whether target is under one of bases (see urlUnder).
func urlUnderAny(target string, bases []string) bool {
	for _, b := range bases {
		if urlUnder(target, b) {
			return true
		}
	}
	return false
}
