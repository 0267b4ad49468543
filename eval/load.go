package eval

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/threadwright/threadwright/conversation/workflow"
)

// maxCaseFile bounds a case file, and each document or file it reads, in bytes.
const maxCaseFile = 4 << 20

// Load reads the cases that paths name: YAML files (.yaml, .yml), and directories,
// whose YAML files are read recursively in lexical order (names starting with "."
// left out). A case's documents are read from paths relative to its file. Errors
// name the file and the line: a YAML error, an unknown field, an expectation that
// cannot be judged, a name used twice.
func Load(paths ...string) ([]*Case, error) {
	var cases []*Case
	for _, root := range paths {
		info, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
		dir, base := root, "."
		if !info.IsDir() {
			dir, base = filepath.Dir(root), filepath.Base(root)
		}
		found, err := loadTree(os.DirFS(dir), base, func(p string) (string, func(string) ([]byte, error)) {
			file := filepath.Join(dir, filepath.FromSlash(p))
			return filepath.ToSlash(file), func(rel string) ([]byte, error) {
				if filepath.IsAbs(rel) {
					return nil, fmt.Errorf("%s: give a path relative to the case's file", rel)
				}
				full := filepath.Join(filepath.Dir(file), filepath.FromSlash(rel))
				return readBounded(os.DirFS(filepath.Dir(full)), filepath.Base(full))
			}
		})
		if err != nil {
			return nil, err
		}
		cases = append(cases, found...)
	}
	return cases, checkNames(cases)
}

// LoadFS reads the cases in the directory dir of fsys, recursively, as Load does,
// their documents from fsys too; shown is how the reports name dir (its path on
// disk, or "builtin").
func LoadFS(fsys fs.FS, dir, shown string) ([]*Case, error) {
	cases, err := loadTree(fsys, dir, func(p string) (string, func(string) ([]byte, error)) {
		name := path.Join(filepath.ToSlash(shown), strings.TrimPrefix(strings.TrimPrefix(p, dir), "/"))
		return name, func(rel string) ([]byte, error) {
			if path.IsAbs(rel) || filepath.IsAbs(rel) {
				return nil, fmt.Errorf("%s: give a path relative to the case's file", rel)
			}
			return readBounded(fsys, path.Clean(path.Join(path.Dir(p), filepath.ToSlash(rel))))
		}
	})
	if err != nil {
		return nil, err
	}
	return cases, checkNames(cases)
}

// loadTree reads the cases at root in fsys: the file root, or the YAML files under
// the directory root. where names a file of fsys for the reports and gives the
// reader of the files its case names.
func loadTree(fsys fs.FS, root string, where func(p string) (string, func(rel string) ([]byte, error))) ([]*Case, error) {
	var cases []*Case
	err := fs.WalkDir(fsys, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("eval: %w", err)
		}
		if p != root && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() || (p != root && !isYAML(p)) {
			return nil
		}
		name, readFile := where(p)
		data, err := readBounded(fsys, p)
		if err != nil {
			return fmt.Errorf("eval: %s: %w", name, err)
		}
		c, err := parseCase(data, name, readFile)
		if err != nil {
			return err
		}
		cases = append(cases, c)
		return nil
	})
	return cases, err
}

func isYAML(p string) bool {
	ext := strings.ToLower(path.Ext(p))
	return ext == ".yaml" || ext == ".yml"
}

// parseCase reads the case data, named shown, whose files readFile reads.
func parseCase(data []byte, shown string, readFile func(rel string) ([]byte, error)) (*Case, error) {
	c := &Case{Path: shown, readFile: readFile}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil {
		if errors.Is(err, io.EOF) {
			err = errors.New("the file is empty")
		}
		return nil, fmt.Errorf("eval: %s: %w", shown, err)
	}
	if c.Name == "" {
		base := path.Base(shown)
		c.Name = strings.TrimSuffix(base, path.Ext(base))
	}
	if err := c.validate(); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", shown, err)
	}
	return c, nil
}

// readBounded reads the file p of fsys, up to maxCaseFile bytes.
func readBounded(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxCaseFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxCaseFile {
		return nil, fmt.Errorf("%s: larger than %d MiB", p, maxCaseFile>>20)
	}
	return data, nil
}

// checkNames reports a case name used twice.
func checkNames(cases []*Case) error {
	seen := map[string]string{}
	for _, c := range cases {
		if other, ok := seen[c.Name]; ok {
			return fmt.Errorf("eval: %s: the name %q is the name of %s too", c.Path, c.Name, other)
		}
		seen[c.Name] = c.Path
	}
	return nil
}

var (
	caseName    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	settingName = regexp.MustCompile(`^[A-Z][A-Z0-9_]*$`)
	users       = []string{"alice", "bob"}
	channels    = []string{"general", "random", "dm"}
	matchModes  = []string{MatchExact, MatchInOrder, MatchAnyOrder, MatchSubset, MatchSuperset}
	// fixedSettings are what a run sets itself: the emulated Slack, the store and the
	// model, which the runner and the launcher choose.
	fixedSettings = []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_API_URL", "DATABASE_URL", "DATA_DIR",
		"OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_SMALL_MODEL", "HTTP_ADDR", "API_ADDR"}
)

// validate checks c and compiles its patterns; the error says what is wrong, and
// where when it can.
func (c *Case) validate() error {
	if !caseName.MatchString(c.Name) {
		return fmt.Errorf("name %q: use letters, digits, '.', '_' and '-'", c.Name)
	}
	if c.Channel == "" {
		c.Channel = "general"
	}
	if !slices.Contains(channels, c.Channel) {
		return fmt.Errorf("channel %q: expected general, random or dm", c.Channel)
	}
	for k := range c.Settings {
		if !settingName.MatchString(k) {
			return fmt.Errorf("settings: %q is not a setting's name (docs/configuration.md lists them)", k)
		}
		if slices.Contains(fixedSettings, k) {
			return fmt.Errorf("settings: %s is chosen by threadwright eval itself (docs/eval.md, \"Running the cases\")", k)
		}
	}
	for name := range c.Files {
		if p := path.Clean(filepath.ToSlash(name)); path.IsAbs(p) || p == "." || strings.HasPrefix(p, "../") {
			return fmt.Errorf("files: %q: give a relative path inside the run's files directory", name)
		}
	}
	if err := c.validateInputs(); err != nil {
		return err
	}
	if len(c.Thread) == 0 && c.Retrieval == nil {
		return errors.New("the case has neither a thread nor retrieval questions")
	}
	if err := c.validateSteps(); err != nil {
		return err
	}
	if err := c.Expect.validate(); err != nil {
		return fmt.Errorf("expect: %w", err)
	}
	if c.Rubric != "" && len(c.Thread) == 0 {
		return errors.New("rubric: a rubric judges a thread; the case has none")
	}
	return c.validateRetrieval()
}

// validateInputs checks the documents and stub tools, reading the documents' files.
func (c *Case) validateInputs() error {
	for i := range c.Knowledge {
		d := &c.Knowledge[i]
		if (d.Text == "") == (d.File == "") {
			return fmt.Errorf("knowledge[%d]: give the document's text or its file", i)
		}
		if d.Source == "" {
			d.Source = filepath.ToSlash(d.File)
		}
		if d.Source == "" {
			return fmt.Errorf("knowledge[%d]: a document given as text needs a source, such as handbook/leave.md", i)
		}
		if d.File != "" {
			b, err := c.readFile(d.File)
			if err != nil {
				return fmt.Errorf("knowledge[%d]: %w", i, err)
			}
			d.Text = string(b)
		}
	}
	seen := map[string]bool{}
	for i, t := range c.Tools {
		switch {
		case t.Name == "":
			return fmt.Errorf("tools[%d]: a tool needs a name", i)
		case t.Description == "":
			return fmt.Errorf("tools[%d] (%s): a tool needs a description, which the model reads", i, t.Name)
		case t.Result != "" && t.Error != "":
			return fmt.Errorf("tools[%d] (%s): a tool has a result or an error, not both", i, t.Name)
		case seen[t.Name]:
			return fmt.Errorf("tools[%d]: %s is defined twice", i, t.Name)
		}
		seen[t.Name] = true
	}
	return nil
}

// validateSteps checks the thread's steps.
func (c *Case) validateSteps() error {
	for i := range c.Thread {
		s := &c.Thread[i]
		if s.User == "" {
			s.User = "alice"
		}
		if !slices.Contains(users, s.User) {
			return fmt.Errorf("line %d: user %q: expected alice or bob", s.Line, s.User)
		}
		if i == 0 && s.Kind() != "say" && s.Kind() != "command" {
			return fmt.Errorf("line %d: the thread starts with a message (say) or a command", s.Line)
		}
		if c.Channel == "dm" && s.User != "alice" {
			return fmt.Errorf("line %d: the dm channel is alice's direct messages with the bot; bob is not in it", s.Line)
		}
		if c.Channel == "dm" && s.Kind() == "command" {
			return fmt.Errorf("line %d: Slack sends slash commands from channels only; use a channel", s.Line)
		}
		if s.Answer != nil {
			if err := s.Answer.compile(); err != nil {
				return fmt.Errorf("line %d: answer: %w", s.Line, err)
			}
		}
	}
	return nil
}

// validateRetrieval checks the retrieval questions.
func (c *Case) validateRetrieval() error {
	r := c.Retrieval
	if r == nil {
		return nil
	}
	if r.K == 0 {
		r.K = 5
	}
	switch {
	case r.K < 1 || r.K > 20:
		return fmt.Errorf("retrieval: k %d: expected 1 to 20", r.K)
	case len(r.Questions) == 0:
		return errors.New("retrieval: no questions")
	case r.MinRecall < 0 || r.MinRecall > 1 || r.MinMRR < 0 || r.MinMRR > 1:
		return errors.New("retrieval: min_recall and min_mrr are between 0 and 1")
	}
	for i, q := range r.Questions {
		if strings.TrimSpace(q.Question) == "" || len(q.Expect) == 0 {
			return fmt.Errorf("retrieval: questions[%d]: a question needs its text and the sources it should find", i)
		}
	}
	return nil
}

// validate checks the expectations and compiles their patterns.
func (e *Expect) validate() error {
	if t := e.Tools; t != nil {
		if t.Match == "" {
			t.Match = MatchExact
		}
		if !slices.Contains(matchModes, t.Match) {
			return fmt.Errorf("tools: match %q: expected one of %s", t.Match, strings.Join(matchModes, ", "))
		}
		for i := range t.Calls {
			call := &t.Calls[i]
			if call.Name == "" {
				return fmt.Errorf("tools: calls[%d]: a call needs the tool's name", i)
			}
			call.args = map[string]*regexp.Regexp{}
			for k, p := range call.Args {
				re, err := regexp.Compile(p)
				if err != nil {
					return fmt.Errorf("tools: calls[%d] (%s): args %s: %w", i, call.Name, k, err)
				}
				call.args[k] = re
			}
		}
	}
	for name, f := range map[string]*Facts{"answer": e.Answer, "thread": e.Thread} {
		if f == nil {
			continue
		}
		if err := f.compile(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if e.Scope != "" && e.Scope != "in" && e.Scope != "out" {
		return fmt.Errorf("scope %q: expected in or out", e.Scope)
	}
	if e.Max.Tokens < 0 || e.Max.Cost < 0 {
		return errors.New("max: bounds are not negative")
	}
	return e.Workflow.validate()
}

// validate checks the workflow's expected statuses.
func (w *WorkflowExpect) validate() error {
	if w == nil {
		return nil
	}
	runStatuses := []workflow.RunStatus{workflow.RunRunning, workflow.RunCompleted, workflow.RunCancelled}
	if w.Status != "" && !slices.Contains(runStatuses, workflow.RunStatus(w.Status)) {
		return fmt.Errorf("workflow: status %q: expected running, completed or cancelled", w.Status)
	}
	statuses := []workflow.ArtifactStatus{workflow.StatusPending, workflow.StatusOptionsGenerated, workflow.StatusOptionSelected,
		workflow.StatusGenerated, workflow.StatusApproved, workflow.StatusStale, workflow.StatusRunning}
	if slices.Contains(w.Criteria, "all") && len(w.Criteria) > 1 {
		return errors.New("workflow: criteria: all goes alone")
	}
	for id, st := range w.Artifacts {
		if !slices.Contains(statuses, workflow.ArtifactStatus(st)) {
			return fmt.Errorf("workflow: artifacts: %s: status %q: expected pending, options_generated, option_selected, generated, approved, stale or running", id, st)
		}
	}
	return nil
}

// compile compiles f's regular expressions.
func (f *Facts) compile() error {
	f.matches, f.notMatches = nil, nil
	for _, p := range f.Matches {
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("matches: %w", err)
		}
		f.matches = append(f.matches, re)
	}
	for _, p := range f.NotMatches {
		re, err := regexp.Compile(p)
		if err != nil {
			return fmt.Errorf("not_matches: %w", err)
		}
		f.notMatches = append(f.notMatches, re)
	}
	return nil
}
