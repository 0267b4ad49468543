package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
)

func TestFailureClassifier(t *testing.T) {
	c := failureClassifier{modelBases: []string{"https://api.openai.com/v1", "http://127.0.0.1:8000/v1"}, slackBase: "https://slack.com/api/"}
	timeout := &url.Error{Op: "Post", URL: "http://127.0.0.1:8000/v1/chat/completions", Err: context.DeadlineExceeded}
	for _, tt := range []struct {
		name string
		err  error
		want conversation.Failure
	}{
		{"APIError", fmt.Errorf("agents: chat completion failed after 2 attempts: %w", &openai.APIError{HTTPStatusCode: 503, Message: "overloaded sk-secret"}),
			conversation.Failure{Cause: conversation.CauseModel, Detail: "HTTP 503", Message: "overloaded sk-secret"}},
		{"APIErrorInStream", &openai.APIError{Message: "server error"}, conversation.Failure{Cause: conversation.CauseModel, Message: "server error"}},
		{"RequestError", fmt.Errorf("x: %w", &openai.RequestError{HTTPStatusCode: 502, Err: errors.New("bad gateway")}),
			conversation.Failure{Cause: conversation.CauseModel, Detail: "HTTP 502"}},
		{"ModelTimeout", fmt.Errorf("agents: executor step 1: %w", agents.ErrTimeout), conversation.Failure{Cause: conversation.CauseModel, Detail: "timeout"}},
		{"ModelTransport", fmt.Errorf("agents: chat completion: %w", timeout), conversation.Failure{Cause: conversation.CauseModel, Detail: "timeout"}},
		{"SlackError", fmt.Errorf("chat.postMessage: %w", slack.SlackErrorResponse{Err: "msg_too_long"}),
			conversation.Failure{Cause: conversation.CauseSlack, Detail: "msg_too_long"}},
		{"SlackOddCode", slack.SlackErrorResponse{Err: "Something with spaces and xoxb-1"}, conversation.Failure{Cause: conversation.CauseSlack}},
		{"SlackRateLimited", fmt.Errorf("post: %w", &slack.RateLimitedError{RetryAfter: time.Second}),
			conversation.Failure{Cause: conversation.CauseSlack, Detail: "rate limited"}},
		{"SlackStatus", slack.StatusCodeError{Code: 500, Status: "500"}, conversation.Failure{Cause: conversation.CauseSlack, Detail: "HTTP 500"}},
		{"SlackTransport", &url.Error{Op: "Post", URL: "https://slack.com/api/chat.postMessage", Err: errors.New("connection refused")},
			conversation.Failure{Cause: conversation.CauseSlack, Detail: "unreachable"}},
		{"OtherURL", &url.Error{Op: "Get", URL: "https://example.org/page", Err: errors.New("refused")}, conversation.Failure{}},
		{"Unknown", errors.New("boom"), conversation.Failure{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := c.Classify(tt.err); got != tt.want {
				t.Fatalf("Classify(%v) = %+v, want %+v", tt.err, got, tt.want)
			}
		})
	}
}
