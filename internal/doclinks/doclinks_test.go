package doclinks_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/threadwright/threadwright/internal/doclinks"
)

// repo is a small repository that the cases point into.
var repo = map[string]string{
	"README.md":               "# demo\n\n## Quick start\n\n## Quick start\n\n```sh\n# Not a heading\n```\n",
	"docs/architecture.md":    "# Architecture\n\n## Durable turns\n\n## Data flow of one Slack event\n",
	"docs/workflows.md":       "# Workflows\n\n## Permissions\n\n### `pass_share` and verdicts\n\n## Usage, cost and budgets\n",
	"store/storetest/doc.go":  "package storetest\n",
	"conversation/turn.go":    "package conversation\n",
	"conversation/testdata/x": "",
}

// TestCheck runs the checker on one extra file per case: a Go file's comment, a
// non-test Go file's string literal, or a Markdown file, each with one pointer that
// must pass (Good) or fail with a reason that contains want.
func TestCheck(t *testing.T) {
	cases := []struct {
		name, file, src, want string
	}{
		// Section pointers in Go comments, in every form the repository has used.
		{"GoodPageSection", "a.go", `// See docs/workflows.md, "Permissions".`, ""},
		{"GoodNoComma", "a.go", `// (docs/architecture.md "Durable turns")`, ""},
		{"GoodReadme", "a.go", `// (README, "Quick start")`, ""},
		{"GoodReadmeMD", "a.go", `// (README.md, "Quick start")`, ""},
		{"GoodArchitectureWord", "a.go", `// (architecture "Durable turns")`, ""},
		{"GoodIgnoresCase", "a.go", `// (docs/workflows.md, "permissions")`, ""},
		{"GoodHeadingWithCode", "a.go", `// (docs/workflows.md, "pass_share and verdicts")`, ""},
		{"GoodWrapped", "a.go", "// (docs/architecture.md, \"Data flow of one\n// Slack event\", step 4)", ""},
		{"GoodSeveral", "a.go", `// (docs/architecture.md, "Durable turns" and "Data flow of one Slack event")`, ""},
		{"GoodSeveralCommas", "a.go", `// (docs/workflows.md, "Permissions", "Usage, cost and budgets")`, ""},
		{"GoodRelativeToFile", "docs/x.md", `See workflows.md, "Permissions".`, ""},
		{"GoodNotAPointer", "a.go", `// The README says more; so does "Permissions".`, ""},
		{"BadSection", "a.go", `// (README, "Workflow YAML reference")`, `no section "Workflow YAML reference" in README.md`},
		{"BadArchitecture", "a.go", `// (docs/architecture.md, "Configuration")`, `no section "Configuration" in docs/architecture.md`},
		{"BadSecondSection", "a.go", `// (docs/architecture.md, "Durable turns" and "Configuration")`, `no section "Configuration"`},
		{"BadWrapped", "a.go", "// (README \"Executor\n// instructions\")", `no section "Executor instructions" in README.md`},
		{"BadDocument", "a.go", `// (docs/tools.md, "Tool policy")`, "no document docs/tools.md"},
		{"BadCodeBlockIsNoHeading", "a.go", `// (README, "Not a heading")`, `no section "Not a heading"`},
		{"BadUnquoted", "a.go", `// (README, Verdicts)`, "name the section in double quotes"},
		{"BadInStructTag", "a.go", "package a\n\ntype C struct {\n\tX string `desc:\"see README \\\"Tool policy\\\"\"`\n}", `no section "Tool policy"`},
		{"BadInString", "a.go", "package a\n\nconst s = \"See README \\\"Playground security\\\".\"", `no section "Playground security"`},
		{"GoodTestStringIsData", "a_test.go", "package a\n\nconst s = \"See README \\\"Playground security\\\".\"", ""},
		{"BadInMarkdown", "docs/x.md", `As [the README](../README.md) says (README, "Tool policy").`, `no section "Tool policy"`},
		{"GoodInMarkdownCode", "docs/x.md", "```\n(README, \"Tool policy\")\n```", ""},

		// Markdown links.
		{"GoodAnchor", "README.md", "# demo\n\n## Quick start\n\nSee [below](#quick-start).", ""},
		{"GoodRepeatedAnchor", "docs/x.md", "[again](../README.md#quick-start-1)", ""},
		{"GoodOtherPage", "docs/x.md", "[permissions](workflows.md#permissions), [usage](workflows.md#usage-cost-and-budgets)", ""},
		{"GoodFile", "README.md", "# demo\n\n[the store tests](store/storetest) and ![pic](docs/workflows.md)", ""},
		{"GoodExternal", "README.md", "# demo\n\n[Slack](https://api.slack.com/apps), [mail](mailto:a@b.c)", ""},
		{"GoodLinkInCode", "README.md", "# demo\n\nnot a Markdown link `[text](url)`", ""},
		{"BadAnchor", "README.md", "# demo\n\nSee [below](#configuration).", "no heading with the anchor #configuration in README.md"},
		{"BadOtherAnchor", "docs/x.md", "[p](workflows.md#verdicts)", "#verdicts in docs/workflows.md"},
		{"BadRepeatedAnchor", "docs/x.md", "[p](../README.md#quick-start-2)", "#quick-start-2"},
		{"BadLinkFile", "docs/x.md", "[api](api.md#webhooks)", "no file or directory docs/api.md"},
		{"BadLinkFromRoot", "docs/x.md", "[arch](docs/architecture.md)", "no file or directory docs/docs/architecture.md"},

		// Repository paths.
		{"GoodPath", "a.go", "// See conversation/turn.go and store/storetest/.", ""},
		{"GoodPackagePattern", "a.go", "// go test ./store/...", ""},
		{"GoodQualified", "a.go", "// store/storetest.Run runs them.", ""},
		{"GoodPlaceholder", "a.go", "// conversation/<name>.go", ""},
		{"GoodNotTopLevel", "a.go", "// golang.org/x/net/html/charset, https://example.com/docs/x", ""},
		{"GoodLocalGoFile", "conversation/doc.go", "// See turn.go.", ""},
		{"GoodPathInMarkdownCode", "docs/x.md", "`conversation/turn.go`", ""},
		{"GoodPathInFence", "docs/x.md", "```sh\ngo run ./cmd/threadwright ingest docs/handbook\n```", ""},
		{"GoodPathInTestString", "a.go", "package a\n\nconst s = \"docs/handbook/leave.md\"", ""},
		{"BadPath", "a.go", "// See conversation/failure.go.", "no file or directory conversation/failure.go"},
		{"BadDir", "a.go", "// (store/storetest/postgres)", "no file or directory store/storetest/postgres"},
		{"BadPlaceholderDir", "a.go", "// store/fixtures/<name>.json", "no file or directory store/fixtures"},
		{"BadPathInMarkdown", "docs/x.md", "Try `go run ./cmd/threadwright ingest docs/handbook`.", "no file or directory docs/handbook"},
		{"BadLocalGoFile", "conversation/doc.go", "// See pipeline_run.go.", "no file conversation/pipeline_run.go"},
		{"GoodTestdataIsSkipped", "conversation/testdata/y.md", "(README, \"Nothing\")", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fsys := fstest.MapFS{}
			for name, src := range repo {
				fsys[name] = &fstest.MapFile{Data: []byte(src)}
			}
			src := tc.src
			if strings.HasSuffix(tc.file, ".go") && !strings.HasPrefix(src, "package") {
				src = src + "\npackage a\n"
			}
			fsys[tc.file] = &fstest.MapFile{Data: []byte(src)}
			problems, err := doclinks.Check(fsys)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && len(problems) > 0:
				t.Errorf("want no problems, got %v", problems)
			case tc.want != "" && (len(problems) != 1 || !strings.Contains(problems[0].Reason, tc.want)):
				t.Errorf("want one problem with %q, got %v", tc.want, problems)
			case tc.want != "" && problems[0].File != tc.file:
				t.Errorf("problem in %s, want %s", problems[0].File, tc.file)
			}
		})
	}
}

// TestProblemLine: a problem names the line of the pointer, also inside a wrapped
// comment and a Markdown paragraph.
func TestProblemLine(t *testing.T) {
	fsys := fstest.MapFS{
		"README.md":   {Data: []byte("# demo\n\nOne line,\ntwo lines (README,\n\"Nowhere\").\n")},
		"bot/a.go":    {Data: []byte("package bot\n\n// One,\n// two (see bot/b.go).\nvar x = 1\n")},
		"bot/b_x.txt": {Data: nil},
	}
	problems, err := doclinks.Check(fsys)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		`README.md:4: README, "Nowhere": no section "Nowhere" in README.md`,
		`bot/a.go:4: bot/b.go: no file or directory bot/b.go`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestAnchor(t *testing.T) {
	for h, want := range map[string]string{
		"Usage, cost and budgets":        "usage-cost-and-budgets",
		"The tool-result contract":       "the-tool-result-contract",
		"Replicas, crashes and outages":  "replicas-crashes-and-outages",
		"HTTP API":                       "http-api",
		"pass_share and verdicts":        "pass_share-and-verdicts",
		"Create the Slack app":           "create-the-slack-app",
		"What `threadwright dev` starts": "what-threadwright-dev-starts",
		"Tokens: 2 × 3 (a/b)":            "tokens-2--3-ab",
		"Журнал изменений":               "журнал-изменений",
	} {
		if got := doclinks.Anchor(h); got != want {
			t.Errorf("Anchor(%q) = %q, want %q", h, got, want)
		}
	}
}
