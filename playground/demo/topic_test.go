package demo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestDemoFollowsTheTopic: given a topic its canned content is not about, the demo
// model's blog options, outline, research and draft, and the product brief's options
// and text, are about that topic; the blog's outline still passes its criteria. The
// canned topic keeps the canned content.
func TestDemoFollowsTheTopic(t *testing.T) {
	ctx := context.Background()
	const topic = "Go generics for data engineers"
	in := map[string]string{"topic": topic}

	t.Run("Blog", func(t *testing.T) {
		def := builtin(t, "blog")
		plan, _ := def.Artifact("plan")
		agent, _ := MustNewBlogAgent(t)
		opts, _, err := agent.ProposeOptions(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: plan, Inputs: in})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range opts {
			if !strings.Contains(o.Text, topic) || strings.Contains(strings.ToLower(o.Text), "stand-up") {
				t.Errorf("option %s is not about the topic: %q", o.Label, o.Text)
			}
		}
		r := conversation.ArtifactRequest{Workflow: def, Artifact: plan, Inputs: in, Options: opts, Selected: &opts[1]}
		outline, _, err := agent.Write(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		items := workflow.Items(outline)
		if !strings.HasPrefix(outline, "# "+topic+" in Practice") || len(items) != 5 || strings.Contains(strings.ToLower(outline), "stand-up") {
			t.Fatalf("outline from option B:\n%s", outline)
		}
		for _, it := range items {
			if !strings.Contains(it.Title+it.Body, topic) {
				t.Errorf("section %q is not about the topic: %q", it.Title, it.Body)
			}
		}
		mustPass(t, agent, r, outline)

		sections, _ := def.Artifact("sections")
		approved := map[string]string{"plan": outline}
		draft, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: sections, Inputs: in, Approved: approved,
			Item: &conversation.Item{Index: 2, Total: len(items), Title: items[2].Title, Brief: items[2].Body}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(draft, topic) {
			t.Errorf("the draft of %q is not about the topic:\n%s", items[2].Title, draft)
		}
	})

	t.Run("ProductBrief", func(t *testing.T) {
		def := builtin(t, "product-brief")
		problem, _ := def.Artifact("problem")
		agent, _ := MustNewAgent(t)
		opts, _, err := agent.ProposeOptions(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: problem, Inputs: in})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range opts {
			if !strings.Contains(o.Text, topic) || strings.Contains(strings.ToLower(o.Text), "dinner") {
				t.Errorf("option %s is not about the topic: %q", o.Label, o.Text)
			}
		}
		text, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: problem, Inputs: in, Options: opts, Selected: &opts[0]})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(text, topic) || strings.Contains(strings.ToLower(text), "dinner") {
			t.Errorf("the problem is not about the topic:\n%s", text)
		}
	})

	t.Run("CannedTopic", func(t *testing.T) {
		def := builtin(t, "blog")
		plan, _ := def.Artifact("plan")
		agent, _ := MustNewBlogAgent(t)
		opts, _, err := agent.ProposeOptions(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: plan, Inputs: map[string]string{"topic": "async stand-ups for small teams"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(opts) == 0 || !strings.Contains(opts[0].Text, "Async Stand-ups for Small Teams") {
			t.Errorf("the canned topic lost its canned options: %+v", opts)
		}
	})
}
