package demo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/playground/demo"
)

// TestBlogDraftQuotesDemoPages: in the offline playground the sources phase reads the
// demo's pages (demo.SourceFetcher) for the URLs of the canned research notes; the
// built-in blog's section draft, written from its notes and those pages, quotes the
// first page with its URL, and the article lists that URL in its references.
func TestBlogDraftQuotesDemoPages(t *testing.T) {
	def := builtin(t, "blog")
	art := func(id string) *workflow.Artifact {
		a, ok := def.Artifact(id)
		if !ok {
			t.Fatalf("blog.yaml has no artifact %q", id)
		}
		return a
	}
	ctx := context.Background()
	agent, _ := MustNewBlogAgent(t)
	opts, _, err := agent.ProposeOptions(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: art("plan")})
	if err != nil {
		t.Fatal(err)
	}
	outline, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: art("plan"), Selected: &opts[0]})
	if err != nil {
		t.Fatal(err)
	}
	items := workflow.Items(outline)
	inputs := map[string]string{"topic": "async stand-ups", "wordcount": "1500"}
	approved := map[string]string{"plan": outline}
	brief, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: art("brief"), Inputs: inputs, Approved: clone(approved)})
	if err != nil {
		t.Fatal(err)
	}
	approved["brief"] = brief

	notes, sources, drafts := make([]string, len(items)), make([]string, len(items)), make([]string, len(items))
	var f demo.SourceFetcher
	for i, it := range items {
		item := &conversation.Item{Index: i, Total: len(items), Title: it.Title, Brief: it.Body}
		r := conversation.ArtifactRequest{Workflow: def, Artifact: art("research"), Inputs: inputs, Approved: clone(approved), Item: item}
		if i == 2 {
			r.Item = &conversation.Item{Index: 3, Total: len(items), Title: it.Title, Brief: it.Body} // the demo fails item 3 until recovery
		}
		if notes[i], _, err = agent.Write(ctx, r); err != nil {
			t.Fatalf("research %d: %v", i+1, err)
		}
		// The sources item as the pipeline writes it (conversation/workflowrun/pipeline_fetch.go).
		urls := workflow.URLs(notes[i], workflow.MaxFetchURLs)
		if len(urls) == 0 {
			t.Fatalf("the notes of %q cite no URL:\n%s", it.Title, notes[i])
		}
		var pages []string
		for _, u := range urls {
			p, err := f.FetchSource(ctx, u)
			if err != nil {
				t.Fatalf("%s: %v", u, err)
			}
			pages = append(pages, "### "+p.Title+"\nSource: "+u+"\n"+p.Text)
		}
		sources[i] = strings.Join(pages, "\n\n")

		r = conversation.ArtifactRequest{Workflow: def, Artifact: art("sections"), Inputs: inputs, Approved: clone(approved), Item: item}
		r.Approved["research"], r.Approved["sources"] = notes[i], sources[i]
		draft, _, err := agent.Write(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(draft, "As “Demo library: ") || !strings.Contains(draft, "” puts it: “") ||
			!strings.Contains(draft, "([demo source]("+urls[0]+")).") {
			t.Errorf("the draft of %q does not quote its first page %s:\n%s", it.Title, urls[0], draft)
		}
		r.Current, r.Instructions = draft, art("sections").Editor.Prompt
		if drafts[i], _, err = agent.Revise(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	approved["research"], approved["sources"], approved["sections"] = blogJoin(items, notes), blogJoin(items, sources), blogJoin(items, drafts)
	text, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: art("article"), Inputs: inputs, Approved: clone(approved)})
	if err != nil {
		t.Fatal(err)
	}
	_, refs, _ := strings.Cut(text, "\n## References\n")
	if !strings.Contains(text, "” puts it: “") {
		t.Errorf("the article quotes no page:\n%s", text)
	}
	if first := workflow.URLs(notes[0], 1); !strings.Contains(refs, first[0]) {
		t.Errorf("the references lack the first page quoted, %s:\n%s", first[0], refs)
	}
}
