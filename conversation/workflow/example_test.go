package workflow_test

import (
	"errors"
	"fmt"

	"github.com/threadwright/threadwright/conversation/workflow"
)

func ExampleParse() {
	src := `
name: launch-plan
title: Launch plan
artifacts:
  - id: goals
    title: Goals
    mode: choice
    criteria:
      - id: measurable
        description: Every goal has a number and a date.
  - id: plan
    title: Plan
    depends_on: [goals]
report: |
  # {{.Workflow.Title}}

  ## {{title "goals"}}
  {{artifact "goals"}}

  ## {{title "plan"}}
  {{artifact "plan"}}
`
	d, err := workflow.Parse("launch-plan.yaml", []byte(src))
	if err != nil {
		panic(err)
	}
	for _, a := range d.Artifacts {
		fmt.Printf("%s: %s, %d options, depends on %v\n", a.ID, a.Mode, a.Options, a.DependsOn)
	}
	report, _ := d.RenderReport(workflow.ReportData{
		Artifacts: map[string]string{"goals": "1,000 sign-ups by June."},
		Approved:  map[string]bool{"goals": true},
		Draft:     true,
	})
	fmt.Print(report)
	// Output:
	// goals: choice, 3 options, depends on []
	// plan: draft, 0 options, depends on [goals]
	// # Launch plan
	//
	// ## Goals
	// 1,000 sign-ups by June.
	//
	// ## Plan
	// _(not written yet)_
}

func ExampleParse_problems() {
	src := `name: launch-plan
title: Launch plan
artifacts:
  - id: goals
    title: Goals
    depends_on: [plan]
  - id: plan
    title: Plan
    depends_on: [goals, budget]
    mode: manual
`
	_, err := workflow.Parse("launch-plan.yaml", []byte(src))
	var e *workflow.Error
	if errors.As(err, &e) {
		for _, p := range e.Problems {
			fmt.Println(p)
		}
	}
	// Output:
	// launch-plan.yaml:6: dependency cycle: goals → plan → goals (each depends on the next)
	// launch-plan.yaml:9: artifact "plan": depends_on names unknown artifact "budget"
	// launch-plan.yaml:10: artifact "plan": mode "manual" is invalid: use choice, draft or auto
}

func ExampleDefinition_Dependents() {
	d, err := workflow.Parse("proposal.yaml", []byte(`
name: mini-proposal
title: Mini proposal
artifacts:
  - {id: methodology, title: Methodology}
  - {id: budget, title: Budget, depends_on: [methodology, timeline]}
  - {id: timeline, title: Timeline, depends_on: [methodology]}
  - {id: conclusion, title: Conclusion, depends_on: [budget]}
  - {id: appendix, title: Appendix}
`))
	if err != nil {
		panic(err)
	}
	fmt.Println("order:", d.Order())
	fmt.Println("stale when methodology changes:", d.Dependents("methodology"))
	fmt.Println("stale when timeline changes:", d.Dependents("timeline"))
	fmt.Println("budget is written from:", d.Dependencies("budget"))
	// Output:
	// order: [methodology timeline budget conclusion appendix]
	// stale when methodology changes: [timeline budget conclusion]
	// stale when timeline changes: [budget conclusion]
	// budget is written from: [methodology timeline]
}

func ExampleItems() {
	outline := `# Why small teams ship faster

## Fewer handoffs
Each handoff adds a queue; small teams have fewer.

## Shared context
Everyone knows why, so fewer meetings.

### An example
A four-person team that ships daily.
`
	for _, it := range workflow.Items(outline) {
		fmt.Printf("%s: %q\n", it.Title, it.Body)
	}
	// A numbered list is used when no heading level repeats.
	for _, it := range workflow.Items("Sections:\n\n1. **Intro** — the question\n2. **Answer**\n   With evidence.\n") {
		fmt.Printf("%s: %q\n", it.Title, it.Body)
	}
	// Output:
	// Fewer handoffs: "Each handoff adds a queue; small teams have fewer."
	// Shared context: "Everyone knows why, so fewer meetings.\n\n### An example\nA four-person team that ships daily."
	// Intro: "the question"
	// Answer: "With evidence."
}

func ExampleDefinition_Profiles() {
	d, err := workflow.Parse("digest.yaml", []byte(`
name: digest
title: News digest
artifacts:
  - {id: topics, title: Topics, mode: choice}
  - id: stories
    title: Stories
    mode: auto
    depends_on: [topics]
    foreach: topics
    retries: 2
    model: fast
    tools: [web_search, fetch_url]
    editor: {prompt: Tighten the prose; keep every link., model: careful}
  - {id: digest, title: Digest, depends_on: [stories], model: careful}
`))
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Profiles())
	// Output:
	// [careful fast]
}
