package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/prompts"
)

// blogPhasesDef is the built-in blog workflow with the phases of issue 17 that its
// blog.yaml will have: sources (fetched pages, per section), brief (from the plan),
// sections that read both, and an article from the plan, the brief and the sections,
// with the article's checks as criteria.
func blogPhasesDef(tb testing.TB) *workflow.Definition {
	tb.Helper()
	def := *builtin(tb, "blog")
	def.Artifacts = slices.Clone(def.Artifacts)
	var arts []workflow.Artifact
	for _, a := range def.Artifacts {
		switch a.ID {
		case "sections":
			arts = append(arts,
				workflow.Artifact{ID: "sources", Title: "Sources", Mode: workflow.ModeAuto, DependsOn: []string{"research"}, Foreach: "plan",
					Description: "The readable text of every page the research found."},
				workflow.Artifact{ID: "brief", Title: "Article brief", Mode: workflow.ModeAuto, DependsOn: []string{"plan"},
					Description: "The article brief: audience, angle, key messages, tone, keywords and words per section."})
			a.DependsOn = []string{"plan", "research", "sources", "brief"}
		case "article":
			a.DependsOn = []string{"plan", "brief", "sections"}
			a.Criteria = articleCriteria
		}
		arts = append(arts, a)
	}
	def.Artifacts = arts
	return &def
}

// articleCriteria are the checks blog.yaml's article will have, as criteria the model
// judges (before the engine runs them itself).
var articleCriteria = []workflow.Criterion{
	{ID: "title", Description: `Starts with the title as a "# " heading.`},
	{ID: "has_meta", Description: "Has a meta description of at most 160 characters after the title."},
	{ID: "meta_keywords", Description: `Has a "Meta keywords:" line.`},
	{ID: "image", Description: `Has an "Image description:" line.`},
	{ID: "toc", Description: "Has a table of contents."},
	{ID: "tldr", Description: "Has a TL;DR of two or three bullets that match the body."},
	{ID: "conclusion", Description: "Ends with a conclusion."},
	{ID: "references", Description: "Ends with a numbered list of references that contains every source cited in the text, and only those."},
	{ID: "word_count", Description: "The body is within 15% of the target word count."},
}

// bodyWords counts an article's body as blog.yaml's words check does: after the first
// "## " heading, without the Table of contents, TL;DR and References sections; with
// lettersOnly, only words with a letter or digit count.
func bodyWords(text string, lettersOnly bool) int {
	excluded := []string{"table of contents", "tl;dr", "references"}
	n, started, skip := 0, false, false
	for _, l := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(l, "## "); ok {
			started, skip = true, slices.Contains(excluded, strings.ToLower(strings.TrimSpace(h)))
		}
		if !started || skip {
			continue
		}
		for _, w := range strings.Fields(l) {
			if !lettersOnly || regexp.MustCompile(`[\p{L}\p{N}]`).MatchString(w) {
				n++
			}
		}
	}
	return n
}

// sourcesText is a section's fetched sources as the sources phase writes them: one
// page fetched, one not.
func sourcesText(slug string) string {
	return "### Stand-ups, written down\nSource: https://news.example.org/" + slug + "\n" +
		"Short written updates let a team see at a glance who needs help before the day gets busy. Everything else can wait for the weekly call.\n\n" +
		"### https://broken.example.net/" + slug + "\nSource: https://broken.example.net/" + slug + "\nNot fetched: HTTP 404"
}

// TestBlogPhases drives the blog's new phases through the WorkflowAgent, as the
// pipeline makes them: the brief from the outline and the wordcount input, each
// section's draft from its own research notes, fetched sources and the brief, and the
// article for three target lengths, checked for every field of its shape and a body
// within 15% of the target, passing its evaluation; the enhancement pass keeps them.
func TestBlogPhases(t *testing.T) {
	def := blogPhasesDef(t)
	art := func(id string) *workflow.Artifact {
		a, ok := def.Artifact(id)
		if !ok {
			t.Fatalf("no artifact %q", id)
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

	for _, wordcount := range []int{800, 1500, 2500} {
		t.Run(strconv.Itoa(wordcount), func(t *testing.T) {
			inputs := map[string]string{"topic": "async stand-ups", "wordcount": strconv.Itoa(wordcount)}
			req := func(id string, approved map[string]string) conversation.ArtifactRequest {
				return conversation.ArtifactRequest{Workflow: def, Artifact: art(id), Inputs: inputs, Approved: clone(approved), Locale: "en"}
			}
			approved := map[string]string{"plan": outline}

			// The brief: audience, angle, tone, keywords, one key message and the
			// words of each section.
			brief, _, err := agent.Write(ctx, req("brief", approved))
			if err != nil {
				t.Fatal(err)
			}
			// In blog.yaml's shape: the reader, angle, key messages, tone,
			// keywords and words per section, each under its "## " heading.
			for _, want := range []string{"## Reader\n", "## Angle\n", "## Key messages\n", "## Tone\n", "## Keywords\n", "## Words per section\n",
				"The body is about " + strconv.Itoa(wordcount) + " words long"} {
				if !strings.Contains(brief, want) {
					t.Errorf("the brief lacks %q:\n%s", want, brief)
				}
			}
			if kw := regexp.MustCompile(`## Keywords\n(.+)`).FindStringSubmatch(brief); kw == nil || len(strings.Split(kw[1], ", ")) != 5 {
				t.Errorf("the brief's keywords are not five:\n%s", brief)
			}
			words := 0
			for _, it := range items {
				if !regexp.MustCompile(`(?m)^- \*\*` + regexp.QuoteMeta(it.Title) + `\*\*: \S`).MatchString(brief) {
					t.Errorf("the brief has no key message for %q:\n%s", it.Title, brief)
				}
				m := regexp.MustCompile(`(?m)^- \*\*` + regexp.QuoteMeta(it.Title) + `\*\*: about (\d+) words$`).FindStringSubmatch(brief)
				if m == nil {
					t.Errorf("the brief gives %q no words:\n%s", it.Title, brief)
					continue
				}
				n, _ := strconv.Atoi(m[1])
				words += n
			}
			if words < wordcount*8/10 || words > wordcount {
				t.Errorf("the sections' words add up to %d, want about %d less the conclusion", words, wordcount)
			}
			again, _, _ := agent.Write(ctx, req("brief", approved))
			if again != brief {
				t.Error("the same brief request got another text")
			}
			approved["brief"] = brief

			// Research, sources and sections, each section's request with its own
			// items of research and sources, as the pipeline gives them.
			notes, sources, drafts := make([]string, len(items)), make([]string, len(items)), make([]string, len(items))
			for i, it := range items {
				item := &conversation.Item{Index: i, Total: len(items), Title: it.Title, Brief: it.Body}
				if i+1 == 3 {
					item.Index = 3 // the demo fails item 3 until recovery: write it as another
				}
				r := req("research", approved)
				r.Item = item
				if notes[i], _, err = agent.Write(ctx, r); err != nil {
					t.Fatalf("research %d: %v", i+1, err)
				}
				sources[i] = sourcesText(fmt.Sprintf("page-%d", i+1))
				r = req("sections", approved)
				r.Item = &conversation.Item{Index: i, Total: len(items), Title: it.Title, Brief: it.Body}
				r.Approved["research"], r.Approved["sources"] = notes[i], sources[i]
				draft, _, err := agent.Write(ctx, r)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(draft, "“Short written updates let a team see at a glance who needs help before the day gets busy”") ||
					!strings.Contains(draft, "([source](https://news.example.org/page-"+strconv.Itoa(i+1)+"))") {
					t.Errorf("the draft of %q does not quote its fetched source:\n%s", it.Title, draft)
				}
				if strings.Contains(draft, "broken.example.net") {
					t.Errorf("the draft of %q cites a page that was not fetched", it.Title)
				}
				r.Current, r.Instructions = draft, art("sections").Editor.Prompt
				if drafts[i], _, err = agent.Revise(ctx, r); err != nil {
					t.Fatal(err)
				}
				if n := len(strings.Fields(drafts[i])); n < 200 || n > 400 {
					t.Errorf("the section %q has %d words, want 200 to 400", it.Title, n)
				}
			}
			approved["research"] = blogJoin(items, notes)
			approved["sources"] = blogJoin(items, sources)
			approved["sections"] = blogJoin(items, drafts)

			ra := req("article", approved)
			text, _, err := agent.Write(ctx, ra)
			if err != nil {
				t.Fatal(err)
			}
			checkArticleShape(t, text, outline, items, wordcount)
			mustPass(t, agent, ra, text)
			if again, _, _ := agent.Write(ctx, ra); again != text {
				t.Error("the same article request got another text")
			}

			// The enhancement pass keeps every field and the length.
			ra.Current, ra.Instructions = text, "Enhance the article: sharpen the wording and the title, keep every section, fact and reference."
			enhanced, _, err := agent.Revise(ctx, ra)
			if err != nil {
				t.Fatal(err)
			}
			checkArticleShape(t, enhanced, outline, items, wordcount)
			if strings.Contains(enhanced, "as asked") {
				t.Errorf("the enhancement added a note:\n%s", enhanced)
			}
			if a, b := bodyWords(text, false), bodyWords(enhanced, false); b > a || b < a*97/100 {
				t.Errorf("the enhancement changed the body from %d to %d words", a, b)
			}
			mustPass(t, agent, ra, enhanced)

			// A person's "shorter" still meets the target.
			ra.Instructions = "make it shorter"
			short, _, err := agent.Revise(ctx, ra)
			if err != nil {
				t.Fatal(err)
			}
			if bodyWords(short, false) >= bodyWords(text, false) {
				t.Errorf("the shorter article has %d words, the first %d", bodyWords(short, false), bodyWords(text, false))
			}
			checkArticleShape(t, short, outline, items, wordcount)
		})
	}
}

// TestBlogArticleOnTopic writes the article of an outline on another topic, without
// drafts in the prompt (the demo drafts them), for three target lengths: every field,
// and the body within 15% of the target; its evaluation passes.
func TestBlogArticleOnTopic(t *testing.T) {
	def := blogPhasesDef(t)
	plan, _ := def.Artifact("plan")
	article, _ := def.Artifact("article")
	agent, _ := MustNewAgent(t)
	ctx := context.Background()
	inputs := map[string]string{"topic": "AI agents in production"}
	r := conversation.ArtifactRequest{Workflow: def, Artifact: plan, Inputs: inputs}
	opts, _, err := agent.ProposeOptions(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	r.Selected = &opts[2]
	outline, _, err := agent.Write(ctx, r)
	if err != nil || !strings.Contains(outline, "AI agents in production") {
		t.Fatalf("outline %q, %v", outline, err)
	}
	for _, wordcount := range []int{800, 1500, 2500} {
		in := map[string]string{"topic": inputs["topic"], "wordcount": strconv.Itoa(wordcount)}
		ra := conversation.ArtifactRequest{Workflow: def, Artifact: article, Inputs: in, Approved: map[string]string{"plan": outline}}
		text, _, err := agent.Write(ctx, ra)
		if err != nil {
			t.Fatal(err)
		}
		checkArticleShape(t, text, outline, workflow.Items(outline), wordcount)
		if !strings.Contains(text, "Meta keywords: ai agents in production, ") {
			t.Errorf("the keywords are not about the topic:\n%s", text)
		}
		mustPass(t, agent, ra, text)
	}
}

// checkArticleShape checks the article's fields, in the order of blog.yaml's shape,
// and its body's length against wordcount (±15%, counted with and without tokens
// that have no letter).
func checkArticleShape(t *testing.T, text, outline string, items []workflow.Item, wordcount int) {
	t.Helper()
	lines := strings.Split(text, "\n")
	if len(lines) < 6 || lines[0] != strings.SplitN(outline, "\n", 2)[0] ||
		!strings.HasPrefix(lines[1], "Meta description: ") || len([]rune(strings.TrimPrefix(lines[1], "Meta description: "))) > 160 ||
		!regexp.MustCompile(`^Meta keywords: \S+( \S+)*(, \S+( \S+)*){4}$`).MatchString(lines[2]) ||
		!strings.HasPrefix(lines[3], "Image description: ") || !strings.HasSuffix(lines[3], ".") ||
		lines[4] != "" || lines[5] != "## Table of contents" {
		t.Fatalf("the article's head is not title, meta description, meta keywords, image description, table of contents:\n%s", strings.Join(lines[:min(len(lines), 8)], "\n"))
	}
	toc := ""
	for _, it := range items {
		toc += "- " + it.Title + "\n"
	}
	if !strings.Contains(text, "## Table of contents\n"+toc+"- Conclusion\n\n## TL;DR\n- ") {
		t.Errorf("the table of contents or the TL;DR is not as expected:\n%s", text)
	}
	at := strings.Index(text, "## TL;DR")
	for _, h := range append(func() []string {
		var out []string
		for _, it := range items {
			out = append(out, "\n## "+it.Title+"\n")
		}
		return out
	}(), "\n## Conclusion\n", "\n## References\n1. ") {
		j := strings.Index(text[at:], h)
		if j < 0 {
			t.Fatalf("%q is missing or out of order:\n%s", h, text)
		}
		at += j
	}
	for _, letters := range []bool{false, true} {
		if n := bodyWords(text, letters); n*100 < wordcount*85 || n*100 > wordcount*115 {
			t.Errorf("the body has %d words (letters only: %v), want %d ± 15%%", n, letters, wordcount)
		}
	}
	body, refs, _ := strings.Cut(text, "\n## References\n")
	cited := map[string]bool{}
	for _, m := range citationRe.FindAllStringSubmatch(body, -1) {
		cited[m[1]] = true
	}
	listed := regexp.MustCompile(`(?m)^(\d+)\. \S`).FindAllStringSubmatch(refs, -1)
	if len(listed) != len(cited) || len(listed) == 0 {
		t.Errorf("%d references for %d cited numbers", len(listed), len(cited))
	}
}

// TestOptionsSelfReview sends the options' self-review: the reviewed options keep
// their labels and titles, and their texts name what the criteria ask.
func TestOptionsSelfReview(t *testing.T) {
	def := builtin(t, "blog")
	plan, _ := def.Artifact("plan")
	agent, _ := MustNewAgent(t)
	first, _, err := agent.ProposeOptions(context.Background(), conversation.ArtifactRequest{Workflow: def, Artifact: plan})
	if err != nil {
		t.Fatal(err)
	}
	review := func(t *testing.T, a *workflow.Artifact, opts []workflow.Option) []workflow.Option {
		t.Helper()
		ps := prompts.MustParse()
		system, err := ps.Render(prompts.WorkflowSystem, prompts.WorkflowSystemData{
			Workflow: prompts.WorkflowInfo{Title: def.Title, Description: def.Description},
			Artifact: &prompts.ArtifactInfo{ID: a.ID, Title: a.Title, Description: a.Description, Mode: string(a.Mode)},
			ToolName: agents.CommitOptionsTool,
		})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Propose %d options for %q, labelled A, B, C.\n\nReview these options against the criteria below, then revise them once:\n\nCriteria:\n", len(opts), a.Title)
		for _, c := range a.Criteria {
			fmt.Fprintf(&b, "- %s: %s\n", c.ID, c.Description)
		}
		b.WriteString("\nOptions:\n")
		for _, o := range opts {
			fmt.Fprintf(&b, "%s. %s: %s\n", o.Label, o.Title, o.Text)
		}
		b.WriteString("\nCall commit_artifact_options with exactly 3 options.")
		req := openai.ChatCompletionRequest{
			Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleSystem, Content: system}, {Role: openai.ChatMessageRoleUser, Content: b.String()}},
			Tools: []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: agents.CommitOptionsTool, Parameters: json.RawMessage(
				`{"type":"object","properties":{"options":{"type":"array","minItems":3,"maxItems":3,"items":{"type":"object","properties":{"label":{"type":"string","enum":["A","B","C"]},"title":{"type":"string"},"text":{"type":"string"}}}}}}`)}}},
			ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: agents.CommitOptionsTool}},
		}
		c, err := demo.New().Complete(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var args struct{ Options []workflow.Option }
		if len(c.ToolCalls) != 1 || json.Unmarshal([]byte(c.ToolCalls[0].Function.Arguments), &args) != nil {
			t.Fatalf("calls = %+v", c.ToolCalls)
		}
		again, _ := demo.New().Complete(context.Background(), req)
		if again.ToolCalls[0].Function.Arguments != c.ToolCalls[0].Function.Arguments {
			t.Error("the same review got other options")
		}
		if len(args.Options) != len(opts) {
			t.Fatalf("got %d options, want %d", len(args.Options), len(opts))
		}
		for i, o := range args.Options {
			if o.Label != opts[i].Label || o.Title != opts[i].Title || o.Text == opts[i].Text {
				t.Errorf("option %d = %+v, want %s %q revised", i, o, opts[i].Label, opts[i].Title)
			}
		}
		return args.Options
	}
	t.Run("Plan", func(t *testing.T) {
		for _, o := range review(t, plan, first) {
			for _, want := range []string{"Working title: “", " Reader: ", " Angle: ", " Sections: ", "builds towards the angle"} {
				if !strings.Contains(o.Text, want) {
					t.Errorf("option %s lacks %q: %s", o.Label, want, o.Text)
				}
			}
		}
	})
	t.Run("Generic", func(t *testing.T) {
		a := &workflow.Artifact{ID: "angle", Title: "Angle", Mode: workflow.ModeChoice, Description: "The story's angle.",
			Criteria: []workflow.Criterion{{ID: "specific", Description: "Names one reader."}, {ID: "short", Description: "Is short."}}}
		opts := []workflow.Option{{Label: "A", Title: "Bold", Text: "A bold angle. It says much."}, {Label: "B", Title: "Calm", Text: "A calm angle."}, {Label: "C", Title: "Dry", Text: "A dry one."}}
		for _, o := range review(t, a, opts) {
			if !strings.HasSuffix(o.Text, "Reviewed against the criteria: specific, short.") {
				t.Errorf("option %s does not say what it was reviewed against: %s", o.Label, o.Text)
			}
		}
	})
}

// TestBatchWrite sends a batch write of research: the demo searches for every item,
// then writes one "## " section per item, titled exactly as listed, each citing its
// own results (or the canned notes); a custom artifact's batch gets its items' texts.
func TestBatchWrite(t *testing.T) {
	titles := []string{"Why live stand-ups stop working", "Three questions, written down", "A made-up heading: with a colon"}
	var b strings.Builder
	fmt.Fprintf(&b, "Write all %d items in one text, one \"## \" section per item, titled exactly as below:\n", len(titles))
	for i, title := range titles {
		fmt.Fprintf(&b, "Item %d of %d: %s\n  What the section %d covers.\n", i+1, len(titles), title, i+1)
	}
	b.WriteString("\nCall commit_artifact_final_text with the complete text.")
	req := researchRequest()
	req.Messages = slices.Clone(req.Messages)
	req.Messages[1].Content = b.String()
	c, err := demo.New().Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.ToolCalls) != 2*len(titles) {
		t.Fatalf("calls = %+v, want a web and a knowledge search per item", c.ToolCalls)
	}
	results := map[string]string{
		"web_search":       "Results for \"x\":\n\n1. Stand-ups that drift\n   https://blog.example.org/drift\n   Live stand-ups drift into status reports within months.",
		"search_knowledge": "No passages found for \"x\" in the knowledge base.",
	}
	next := withResults(req, c.ToolCalls, results)
	text := committedText(t, mustComplete(t, next))
	items := workflow.Items(text)
	if len(items) != len(titles) {
		t.Fatalf("the batch splits into %d items, want %d:\n%s", len(items), len(titles), text)
	}
	for i, it := range items {
		if it.Title != titles[i] || !strings.Contains(it.Body, "(source: https://blog.example.org/drift)") {
			t.Errorf("item %d = %q, want %q citing its result:\n%s", i+1, it.Title, titles[i], it.Body)
		}
	}
	if committedText(t, mustComplete(t, next)) != text {
		t.Error("the same batch got another text")
	}

	t.Run("Custom", func(t *testing.T) {
		req := openai.ChatCompletionRequest{
			Messages: []openai.ChatCompletionMessage{
				{Role: openai.ChatMessageRoleSystem, Content: "You are threadwright.\n\n## The document: Launch plan\n\n## The artifact now: Tactics (`tactics`)\nWhat to do on each channel."},
				{Role: openai.ChatMessageRoleUser, Content: "Write all 2 items in one text, one \"## \" section per item, titled exactly as below:\nItem 1 of 2: Newsletter\n  Our 2,000 readers.\nItem 2 of 2: Podcast\n  A guest spot.\n\nCall commit_artifact_final_text."},
			},
			Tools:      researchRequest().Tools[3:],
			ToolChoice: openai.ToolChoice{Type: openai.ToolTypeFunction, Function: openai.ToolFunction{Name: agents.CommitFinalTextTool}},
		}
		text := committedText(t, mustComplete(t, req))
		items := workflow.Items(text)
		if len(items) != 2 || items[0].Title != "Newsletter" || items[1].Title != "Podcast" ||
			!strings.HasPrefix(items[0].Body, "**Newsletter.** Our 2,000 readers.") || !strings.HasPrefix(items[1].Body, "**Podcast.** A guest spot.") {
			t.Errorf("the batch is not the two items:\n%s", text)
		}
	})
}

func mustComplete(t *testing.T, req openai.ChatCompletionRequest) agents.Completion {
	t.Helper()
	c, err := demo.New().Complete(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestProposalResearchSearches writes the proposal's research with the search tools:
// the demo searches, then writes its research citing what the searches found.
func TestProposalResearchSearches(t *testing.T) {
	def := builtin(t, "proposal")
	research, _ := def.Artifact("research")
	reg := agents.NewRegistry()
	var queries []string
	reg.MustRegister(agents.ToolSpec{Name: "web_search", Description: "Search the web."},
		agents.ToolFunc(func(_ context.Context, raw json.RawMessage) (string, error) {
			queries = append(queries, string(raw))
			return "Results for \"q\":\n\n1. Energy poverty in small towns\n   https://stats.example.org/energy-poverty\n   One household in six spends more than a tenth of its income on energy.", nil
		}))
	agent := agents.NewWorkflowAgent(agents.WorkflowAgentConfig{Client: demo.New(), Model: demo.ModelName, Tools: reg, Logger: quietLogger()})
	text, _, err := agent.Write(context.Background(), conversation.ArtifactRequest{Workflow: def, Artifact: research, Locale: "en"})
	if err != nil {
		t.Fatal(err)
	}
	if len(queries) != 1 || !strings.Contains(queries[0], "Millbrook") {
		t.Errorf("queries = %q, want one about the proposal's subject", queries)
	}
	if !strings.Contains(text, "**What the searches found**") || !strings.Contains(text, "(https://stats.example.org/energy-poverty)") || !strings.Contains(text, "**Open questions before submitting**") {
		t.Errorf("the research does not cite the search result:\n%s", text)
	}
}

// TestBlogDraftFromFoundNotes drafts a section from notes the searches found (a web
// page and a knowledge-base passage), then the article: the draft cites both, and the
// references list them as they are, not as placeholders.
func TestBlogDraftFromFoundNotes(t *testing.T) {
	def := blogPhasesDef(t)
	plan, _ := def.Artifact("plan")
	sections, _ := def.Artifact("sections")
	article, _ := def.Artifact("article")
	agent, _ := MustNewAgent(t)
	ctx := context.Background()
	opts, _, err := agent.ProposeOptions(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: plan})
	if err != nil {
		t.Fatal(err)
	}
	outline, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: plan, Selected: &opts[0]})
	if err != nil {
		t.Fatal(err)
	}
	items := workflow.Items(outline)
	found := "_Offline demo notes from the search results._\n\n" +
		"- Teams that post updates in a morning window read them more reliably (source: https://blog.example.org/async-standups)\n" +
		"- Our team posts stand-up updates between 9 and 11 local time (source: handbook/rituals.md — Stand-ups)"
	r := conversation.ArtifactRequest{Workflow: def, Artifact: sections, Approved: map[string]string{"plan": outline, "research": found},
		Item: &conversation.Item{Index: 0, Total: len(items), Title: items[0].Title, Brief: items[0].Body}}
	draft, _, err := agent.Write(ctx, r)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"([source](https://blog.example.org/async-standups))", "(source: handbook/rituals.md — Stand-ups)"} {
		if !strings.Contains(draft, want) {
			t.Errorf("the draft lacks %q:\n%s", want, draft)
		}
	}
	text, _, err := agent.Write(ctx, conversation.ArtifactRequest{Workflow: def, Artifact: article,
		Approved: map[string]string{"plan": outline, "sections": blogJoin(items, append([]string{draft}, slices.Repeat([]string{"A draft without sources."}, len(items)-1)...))}})
	if err != nil {
		t.Fatal(err)
	}
	_, refs, _ := strings.Cut(text, "\n## References\n")
	for _, want := range []string{"1. https://blog.example.org/async-standups\n", "2. handbook/rituals.md — Stand-ups (knowledge base)"} {
		if !strings.Contains(refs, want) {
			t.Errorf("the references lack %q:\n%s", want, refs)
		}
	}
	if strings.Contains(text, "every reference is a placeholder") {
		t.Error("the article calls real references placeholders")
	}
}

// TestEnhanceOther revises a custom draft with an enhance prompt: the wording is
// tightened, every line kept, and no note is added.
func TestEnhanceOther(t *testing.T) {
	def := &workflow.Definition{Name: "memo", Title: "Memo", Artifacts: []workflow.Artifact{{ID: "memo", Title: "Memo", Description: "A short memo."}}}
	agent, _ := MustNewAgent(t)
	cur := "We really need a number of changes in order to ship.\n\n- First, we really fix the build."
	got, _, err := agent.Revise(context.Background(), conversation.ArtifactRequest{Workflow: def, Artifact: &def.Artifacts[0], Current: cur,
		Instructions: "Enhance the text: tighten the wording, keep every point."})
	if err != nil {
		t.Fatal(err)
	}
	if want := "We need several changes to ship.\n\n- First, we fix the build."; got != want {
		t.Errorf("enhanced = %q, want %q", got, want)
	}
}
