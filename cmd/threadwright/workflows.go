package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/prompts"
)

const workflowsUsage = `Usage:
  threadwright workflows list                list the workflows: built-in and in WORKFLOWS_DIR
  threadwright workflows validate [PATH...]  check workflow files (files or directories);
                                             without a path, the built-ins and WORKFLOWS_DIR

validate prints every problem as file:line: reason and exits non-zero when there is one.
`

// runWorkflows runs "threadwright workflows ARGS" (args are what follows
// "workflows"): list or validate. workflowsDir is WORKFLOWS_DIR ("" when unset);
// webSearch tells whether a search provider is configured (validate warns about
// research that would run without it); profiles holds the names MODEL_PROFILES
// defines (validate warns about a prefer_model it lacks).
// Listings and problems go to stdout, usage to stderr; the error is what main
// prints before exiting non-zero.
func runWorkflows(args []string, workflowsDir string, webSearch bool, profiles map[string]bool, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, workflowsUsage)
		return errors.New("workflows: missing subcommand: list or validate")
	}
	switch args[0] {
	case "list":
		if len(args) > 1 {
			fmt.Fprint(stderr, workflowsUsage)
			return fmt.Errorf("workflows list: unexpected argument %q", args[1])
		}
		return listWorkflows(workflowsDir, stdout, stderr)
	case "validate":
		return validateWorkflows(args[1:], workflowsDir, webSearch, profiles, stdout)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, workflowsUsage)
		return nil
	default:
		fmt.Fprint(stderr, workflowsUsage)
		return fmt.Errorf("workflows: unknown subcommand %q", args[0])
	}
}

// LoadWorkflows returns the workflows the bot offers: the built-ins (prompts.Workflows)
// and every *.yaml/*.yml file directly in workflowsDir ("" for none). Call it at
// start-up: it fails on a missing WORKFLOWS_DIR, and on any invalid file or duplicate
// name with an error wrapping a *workflow.Error, one "file:line: reason" per line.
func LoadWorkflows(workflowsDir string) (*workflow.Set, error) {
	defs, problems, err := loadWorkflowFiles(workflowsDir)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("invalid workflow files:\n%w", &workflow.Error{Problems: problems})
	}
	set, err := workflow.NewSet(defs...)
	if err != nil {
		return nil, fmt.Errorf("invalid workflow files:\n%w", err)
	}
	return set, nil
}

// loadWorkflowFiles parses the built-ins and workflowsDir's files, returning the valid
// definitions (built-ins first) and the problems of the others. The error is for a
// directory that cannot be read.
func loadWorkflowFiles(workflowsDir string) ([]*workflow.Definition, []workflow.Problem, error) {
	defs, err := workflow.Load(prompts.Workflows, "workflows", workflow.BuiltinPrefix)
	problems, err := problemsOf(err)
	if err != nil {
		return nil, nil, err
	}
	if workflowsDir == "" {
		return defs, problems, nil
	}
	more, err := loadWorkflowDir("WORKFLOWS_DIR "+workflowsDir, workflowsDir)
	moreProblems, err := problemsOf(err)
	if err != nil {
		return nil, nil, err
	}
	return append(defs, more...), append(problems, moreProblems...), nil
}

// loadWorkflowDir loads the workflow files in dir; label names dir in errors.
func loadWorkflowDir(label, dir string) ([]*workflow.Definition, error) {
	info, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%s: no such directory", label)
	case err != nil:
		return nil, fmt.Errorf("%s: %w", label, err)
	case !info.IsDir():
		return nil, fmt.Errorf("%s: not a directory", label)
	}
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	if filepath.Clean(dir) == "." {
		prefix = ""
	}
	return workflow.Load(os.DirFS(dir), ".", prefix)
}

// problemsOf splits err into workflow problems and any other error.
func problemsOf(err error) ([]workflow.Problem, error) {
	var e *workflow.Error
	if errors.As(err, &e) {
		return e.Problems, nil
	}
	return nil, err
}

func listWorkflows(workflowsDir string, stdout, stderr io.Writer) error {
	defs, problems, err := loadWorkflowFiles(workflowsDir)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tTITLE\tARTIFACTS\tSOURCE")
	for _, d := range sortedByName(defs) {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\n", d.Name, d.Title, len(d.Artifacts), d.Source)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if _, err := workflow.NewSet(defs...); err != nil {
		p, _ := problemsOf(err)
		problems = append(problems, p...)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(stderr, p)
		}
		return fmt.Errorf("workflows: %s (the bot will not start)", countProblems(problems))
	}
	return nil
}

// validateWorkflows checks paths (files or directories of workflow files), or the
// built-ins and workflowsDir when there is none. Without webSearch, an artifact that
// names web_search is a warning, which does not fail the command; so is a
// prefer_model that profiles (MODEL_PROFILES's names) lacks.
func validateWorkflows(paths []string, workflowsDir string, webSearch bool, profiles map[string]bool, stdout io.Writer) error {
	var (
		defs     []*workflow.Definition
		problems []workflow.Problem
	)
	if len(paths) == 0 {
		var err error
		if defs, problems, err = loadWorkflowFiles(workflowsDir); err != nil {
			return err
		}
	}
	for _, path := range paths {
		d, p := validatePath(path)
		defs, problems = append(defs, d...), append(problems, p...)
	}
	if _, err := workflow.NewSet(defs...); err != nil {
		p, _ := problemsOf(err)
		problems = append(problems, p...)
	}
	for _, p := range problems {
		fmt.Fprintln(stdout, p)
	}
	if len(problems) > 0 {
		return fmt.Errorf("workflows: %s", countProblems(problems))
	}
	// Warnings do not fail validation: research runs without the web, and a
	// tainted writer's side-effect call asks a person, or is refused, when it runs.
	var warnings []string
	if !webSearch {
		warnings = withoutWebSearch(defs)
	}
	warnings = append(warnings, preferredProfileNotes(defs, definedIn(profiles), "warning: ")...)
	for _, d := range defs {
		for _, w := range d.TaintWarnings(toolKind) {
			warnings = append(warnings, w.String())
		}
	}
	for _, w := range warnings {
		fmt.Fprintln(stdout, w)
	}
	if len(warnings) > 0 {
		fmt.Fprintf(stdout, "ok: %d workflows, %d %s\n", len(defs), len(warnings), plural(len(warnings), "warning"))
		return nil
	}
	fmt.Fprintf(stdout, "ok: %d workflows\n", len(defs))
	return nil
}

// withoutWebSearch warns, for each artifact of defs that names web_search, that it
// runs without the web: no search provider is configured (docs/tools.md, "Web
// search").
func withoutWebSearch(defs []*workflow.Definition) []string {
	var out []string
	for _, d := range defs {
		for _, a := range d.Artifacts {
			if slices.Contains(a.Tools, "web_search") {
				out = append(out, fmt.Sprintf("%s: warning: artifact %q names web_search, but no search provider is configured "+
					"(SEARXNG_URL, BRAVE_SEARCH_API_KEY or TAVILY_API_KEY): it runs without the web, and its cards say so", d.Source, a.ID))
			}
		}
	}
	return out
}

// toolKind is what validate knows of a tool by its name alone (workflow.ToolKind):
// web_search and fetch_url read the open web, and search_knowledge may return
// documents uploaded through the API (untrusted unless their token is); these and
// current_time and calculate only read. Any other tool, such as an MCP server's
// server__tool, may change something (docs/tools.md, "Tool policy").
func toolKind(tool string) (untrusted, readOnly bool) {
	switch tool {
	case "web_search", "fetch_url", "search_knowledge":
		return true, true
	case "current_time", "calculate":
		return false, true
	}
	return false, false
}

// validatePath parses the file at path, or the workflow files in the directory.
func validatePath(path string) ([]*workflow.Definition, []workflow.Problem) {
	info, err := os.Stat(path)
	if err != nil {
		reason := err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			reason = "no such file or directory"
		}
		return nil, []workflow.Problem{{File: path, Reason: reason}}
	}
	if info.IsDir() {
		defs, err := loadWorkflowDir(path, path)
		problems, err := problemsOf(err)
		if err != nil {
			return nil, []workflow.Problem{{File: path, Reason: err.Error()}}
		}
		if len(defs) == 0 && len(problems) == 0 {
			problems = append(problems, workflow.Problem{File: path, Reason: "no workflow files (*.yaml, *.yml) in this directory"})
		}
		return defs, problems
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, []workflow.Problem{{File: path, Reason: err.Error()}}
	}
	d, err := workflow.Parse(path, data)
	problems, err := problemsOf(err)
	if err != nil {
		problems = append(problems, workflow.Problem{File: path, Reason: err.Error()})
	}
	if d == nil {
		return nil, problems
	}
	return []*workflow.Definition{d}, problems
}

func sortedByName(defs []*workflow.Definition) []*workflow.Definition {
	out := slices.Clone(defs)
	slices.SortStableFunc(out, func(a, b *workflow.Definition) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// countProblems says "1 problem in 1 file", "3 problems in 2 files".
func countProblems(problems []workflow.Problem) string {
	files := map[string]bool{}
	for _, p := range problems {
		files[p.File] = true
	}
	return fmt.Sprintf("%d %s in %d %s", len(problems), plural(len(problems), "problem"), len(files), plural(len(files), "file"))
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
