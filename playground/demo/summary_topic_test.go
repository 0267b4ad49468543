package demo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// TestBlogSummaryFollowsTheTopic: the blog report's summary says what the article is
// about, the topic the team gave, not the canned subject (stand-ups); without a topic
// it keeps the canned one.
func TestBlogSummaryFollowsTheTopic(t *testing.T) {
	agent, _ := MustNewAgent(t)
	def := builtin(t, "blog")
	for _, tc := range []struct{ topic, want, not string }{
		{"Go generics for data engineers", "is a blog article on Go generics for data engineers.", "stand-ups"},
		{"", "is a blog article for small teams on running their stand-ups asynchronously.", ""},
	} {
		r := conversation.ArtifactRequest{Workflow: def, Approved: map[string]string{}, Inputs: map[string]string{}}
		if tc.topic != "" {
			r.Inputs["topic"] = tc.topic
		}
		summary, _, err := agent.Summarize(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(summary, tc.want) || tc.not != "" && strings.Contains(summary, tc.not) {
			t.Errorf("topic %q: summary %q; want %q, without %q", tc.topic, summary, tc.want, tc.not)
		}
	}
}
