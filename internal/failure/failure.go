package failure

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

// Classifier classifies errors by their types and by the base URLs they were sent
// to.
type Classifier struct {
	// ModelURLs are the base URLs of the model endpoints (OPENAI_BASE_URL and the
	// model profiles'): a transport error to one of them is the model's.
	ModelURLs []string
	// SlackURL is the Slack Web API's base URL (SLACK_API_URL).
	SlackURL string
}

var _ conversation.Classifier = Classifier{}.Classify

// Classify returns what err came from, or a Failure with CauseUnknown. Checked in
// order: go-openai's errors and the agents' model errors (model); slack-go's
// (Slack); a *url.Error to a model URL (model) or the Slack URL (Slack).
func (c Classifier) Classify(err error) conversation.Failure {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var slackErr slack.SlackErrorResponse
	var slackPtr *slack.SlackErrorResponse
	var limited *slack.RateLimitedError
	var status slack.StatusCodeError
	var urlErr *url.Error
	switch {
	case errors.As(err, &apiErr):
		f := model(apiErr.HTTPStatusCode)
		f.Message = apiErr.Message
		return f
	case errors.As(err, &reqErr):
		return model(reqErr.HTTPStatusCode)
	case errors.Is(err, agents.ErrTimeout):
		return conversation.Failure{Cause: conversation.CauseModel, Detail: "timeout"}
	case errors.Is(err, agents.ErrEmptyResponse):
		return conversation.Failure{Cause: conversation.CauseModel, Detail: "empty answer"}
	case errors.As(err, &slackErr):
		return conversation.Failure{Cause: conversation.CauseSlack, Detail: code(slackErr.Err)}
	case errors.As(err, &slackPtr):
		return conversation.Failure{Cause: conversation.CauseSlack, Detail: code(slackPtr.Err)}
	case errors.As(err, &limited):
		return conversation.Failure{Cause: conversation.CauseSlack, Detail: "rate limited"}
	case errors.As(err, &status):
		return conversation.Failure{Cause: conversation.CauseSlack, Detail: "HTTP " + strconv.Itoa(status.Code)}
	case errors.As(err, &urlErr):
		f := conversation.Failure{Detail: transport(urlErr)}
		switch {
		case under(urlErr.URL, c.SlackURL):
			f.Cause = conversation.CauseSlack
		case slicesUnder(urlErr.URL, c.ModelURLs):
			f.Cause = conversation.CauseModel
		default:
			return conversation.Failure{}
		}
		return f
	}
	return conversation.Failure{}
}

// model is a model failure with HTTP status code (0: none, an error inside a stream).
func model(code int) conversation.Failure {
	f := conversation.Failure{Cause: conversation.CauseModel}
	if code != 0 {
		f.Detail = "HTTP " + strconv.Itoa(code)
	}
	return f
}

// code is Slack's error code when it looks like one ("msg_too_long"), or "".
func code(s string) string {
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

// transport says in a word how a request failed without an HTTP response: it timed
// out, or the server could not be reached.
func transport(e *url.Error) string {
	if e.Timeout() || errors.Is(e, context.DeadlineExceeded) {
		return "timeout"
	}
	return "unreachable"
}

// under reports whether target is base or below it (scheme, host and path prefix).
func under(target, base string) bool {
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

func slicesUnder(target string, bases []string) bool {
	for _, b := range bases {
		if under(target, b) {
			return true
		}
	}
	return false
}
