package demo_test

import (
	"context"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// TestBlogPhasesThroughTemplates sends the blog's new requests through the workflow
// agent and package prompts' real templates, as the playground does: the outline's
// self-review (ArtifactRequest.Review) revises the options once and keeps their
// labels, and a batch research write (ArtifactRequest.Batch, research_strategy:
// batch) comes back as one "## " section per item, titled as the items, each with
// notes citing their sources.
func TestBlogPhasesThroughTemplates(t *testing.T) {
	def := builtin(t, "blog")
	plan, _ := def.Artifact("plan")
	research, _ := def.Artifact("research")
	ctx := context.Background()
	agent, _ := MustNewBlogAgent(t)
	inputs := map[string]string{"topic": "async stand-ups", "wordcount": "1500"}

	first, _, err := agent.ProposeOptions(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: plan, Inputs: inputs})
	if err != nil {
		t.Fatal(err)
	}
	revised, _, err := agent.ProposeOptions(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: plan, Inputs: inputs, Review: first})
	if err != nil {
		t.Fatal(err)
	}
	if len(revised) != len(first) {
		t.Fatalf("%d revised options for %d", len(revised), len(first))
	}
	for i := range first {
		if revised[i].Label != first[i].Label || revised[i].Text == first[i].Text {
			t.Errorf("option %s: revised %+v from %+v; want the same label and a revised text", first[i].Label, revised[i], first[i])
		}
	}

	outline, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: plan, Inputs: inputs, Selected: &revised[0]})
	if err != nil {
		t.Fatal(err)
	}
	items := workflow.Items(outline)
	batch := make([]conversation.Item, len(items))
	for i, it := range items {
		batch[i] = conversation.Item{Index: i, Total: len(items), Title: it.Title, Brief: it.Body}
	}
	batchResearch := *research
	batchResearch.ResearchStrategy = workflow.StrategyBatch
	text, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: &batchResearch, Inputs: inputs,
		Approved: map[string]string{"plan": outline}, Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	got := workflow.Items(text)
	if len(got) != len(items) {
		t.Fatalf("the batch has %d sections, want %d:\n%s", len(got), len(items), text)
	}
	for i, it := range got {
		if it.Title != items[i].Title || len(workflow.URLs(it.Body, workflow.MaxFetchURLs)) == 0 {
			t.Errorf("section %d: %q with notes\n%s\nwant %q with sourced notes", i+1, it.Title, it.Body, items[i].Title)
		}
	}
}
