package eval

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Case is one eval case, read from a YAML file (docs/eval.md, "Writing a case"): the
// thread as people typed it, what the run starts with (settings, files, knowledge
// documents, stub tools), and what is expected of the bot.
type Case struct {
	// Name names the case in reports, cassettes and comparisons; default the file's
	// name without its extension. Names are unique within a set.
	Name        string   `yaml:"name"`
	Description string   `yaml:"description"`
	Tags        []string `yaml:"tags"`
	// Settings are environment settings of the run (docs/configuration.md), over the
	// configured ones: SCOPE_DESCRIPTION, STRATEGY, TOOL_POLICY, … "${FILES}" in a
	// value is the directory Files are written to.
	Settings map[string]string `yaml:"settings"`
	// Files are written, by relative path, to the run's files directory before it
	// starts: a tool policy, executor instructions, a workflow definition.
	Files map[string]string `yaml:"files"`
	// Channel is where the thread is: general (default), random, or dm (alice's
	// direct messages with the bot).
	Channel string `yaml:"channel"`
	// Knowledge are documents loaded into the run's knowledge base before the thread.
	Knowledge []Document `yaml:"knowledge"`
	// Tools are stub tools added to the run's registry.
	Tools []ToolStub `yaml:"tools"`
	// Thread is what people do, step by step; the bot works out each step before
	// the next.
	Thread []Step `yaml:"thread"`
	// Expect is what is judged without a model.
	Expect Expect `yaml:"expect"`
	// Retrieval scores the knowledge base by search_knowledge alone.
	Retrieval *Retrieval `yaml:"retrieval"`
	// Rubric, when set, is judged by the rubric model (off unless asked for) and
	// reported apart from the judge-free checks.
	Rubric string `yaml:"rubric"`
	// Timeout bounds one run of the case; default the runner's.
	Timeout Duration `yaml:"timeout"`

	// Path is the file the case was read from, as given.
	Path string `yaml:"-"`
	// readFile reads a file named relative to the case's file.
	readFile func(rel string) ([]byte, error)
}

// Document is a knowledge document of a case.
type Document struct {
	// Source is the name the document is stored and cited as, e.g.
	// "handbook/leave.md"; its extension picks the format (Markdown, text, HTML).
	// Default File.
	Source string `yaml:"source"`
	// Text is the document's content, or File names a file relative to the case.
	Text string `yaml:"text"`
	File string `yaml:"file"`
}

// ToolStub is a tool a case adds to the run: it answers every call with Result, or
// fails with Error. The classification follows agents.ToolSpec (docs/tools.md, "Tool
// policy"): a tool that is not read_only has side effects.
type ToolStub struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	// Parameters is the JSON schema of the arguments; default an object without
	// properties.
	Parameters    map[string]any `yaml:"parameters"`
	ReadOnly      bool           `yaml:"read_only"`
	NeedsApproval bool           `yaml:"needs_approval"`
	Untrusted     bool           `yaml:"untrusted"`
	Result        string         `yaml:"result"`
	Error         string         `yaml:"error"`
}

// Step is one thing a person does in the thread. Exactly one of Say, Command, Click,
// Choose and Submit is set.
type Step struct {
	// User is who acts: alice (default) or bob.
	User string
	// Say posts a message: the first one starts the thread, the others reply in
	// it. "@threadwright" in it is a mention of the bot.
	Say string
	// Command runs the slash command /threadwright with this text in the channel,
	// e.g. "start product-brief"; a command that starts a workflow starts the thread.
	Command string
	// Click clicks the button whose label starts with this text, on the newest
	// message of the thread that has one (under Under, a text of the message, when
	// set).
	Click string
	// Choose picks the item whose label starts with this text from a menu of the
	// newest message that has one.
	Choose string
	Under  string
	// Submit submits the open modal: its one text field (SubmitText), or its fields by
	// label (SubmitFields).
	SubmitText   string
	SubmitFields map[string]string
	// Answer is what the bot's reply to this step must say.
	Answer *Facts
	// Line is the step's line in its file.
	Line int
}

// Kind names what s does: say, command, click, choose or submit.
func (s Step) Kind() string {
	switch {
	case s.Say != "":
		return "say"
	case s.Command != "":
		return "command"
	case s.Click != "":
		return "click"
	case s.Choose != "":
		return "choose"
	case s.SubmitText != "" || s.SubmitFields != nil:
		return "submit"
	}
	return ""
}

// String describes s in one line, for reports.
func (s Step) String() string {
	var what string
	switch s.Kind() {
	case "say":
		what = fmt.Sprintf("says %q", s.Say)
	case "command":
		what = fmt.Sprintf("runs /threadwright %s", s.Command)
	case "click":
		what = fmt.Sprintf("clicks %q", s.Click)
	case "choose":
		what = fmt.Sprintf("chooses %q", s.Choose)
	case "submit":
		what = "submits the modal"
		if s.SubmitText != "" {
			what = fmt.Sprintf("submits %q", s.SubmitText)
		}
	}
	return s.User + " " + what
}

// stepKeys are the keys a step may have.
var stepKeys = map[string]bool{"user": true, "say": true, "command": true, "click": true, "choose": true, "under": true, "submit": true, "answer": true}

// UnmarshalYAML reads a step, refusing unknown keys and a step that does not do
// exactly one thing.
func (s *Step) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: a step is a mapping such as {say: \"@threadwright hello\"}", n.Line)
	}
	s.Line = n.Line
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !stepKeys[k.Value] {
			return fmt.Errorf("line %d: unknown step key %q (say, command, click, choose, submit, user, under, answer)", k.Line, k.Value)
		}
		var err error
		switch k.Value {
		case "user":
			err = v.Decode(&s.User)
		case "say":
			err = v.Decode(&s.Say)
		case "command":
			err = v.Decode(&s.Command)
		case "click":
			err = v.Decode(&s.Click)
		case "choose":
			err = v.Decode(&s.Choose)
		case "under":
			err = v.Decode(&s.Under)
		case "answer":
			s.Answer = new(Facts)
			err = v.Decode(s.Answer)
		case "submit":
			if v.Kind == yaml.MappingNode {
				err = v.Decode(&s.SubmitFields)
			} else {
				err = v.Decode(&s.SubmitText)
			}
		}
		if err != nil {
			return fmt.Errorf("line %d: %s: %w", v.Line, k.Value, err)
		}
	}
	n1 := 0
	for _, set := range []bool{s.Say != "", s.Command != "", s.Click != "", s.Choose != "", s.SubmitText != "" || s.SubmitFields != nil} {
		if set {
			n1++
		}
	}
	if n1 != 1 {
		return fmt.Errorf("line %d: a step does exactly one thing: say, command, click, choose or submit", n.Line)
	}
	if s.Under != "" && s.Click == "" && s.Choose == "" {
		return fmt.Errorf("line %d: under goes with click or choose", n.Line)
	}
	return nil
}

// Expect is what a case expects, judged without a model.
type Expect struct {
	// Tools are the tool calls of the run, in a match mode.
	Tools *ToolExpect `yaml:"tools"`
	// Answer is what the bot's reply to the last step must and must not say; Thread
	// the same of every message the bot posted in the thread (cards included).
	Answer *Facts `yaml:"answer"`
	Thread *Facts `yaml:"thread"`
	// Scope is the verdict of every scope check of the run: in or out.
	Scope string `yaml:"scope"`
	// Workflow is the state the thread's workflow run reaches.
	Workflow *WorkflowExpect `yaml:"workflow"`
	// Max bounds the run's tokens, cost and latency.
	Max Bounds `yaml:"max"`
}

// Match modes of ToolExpect, as Google ADK's and LangChain agentevals' trajectory
// matches name them.
const (
	MatchExact    = "exact"     // the same calls in the same order, nothing else
	MatchInOrder  = "in_order"  // the expected calls in this order; others may come between
	MatchAnyOrder = "any_order" // the same calls in any order, nothing else
	MatchSubset   = "subset"    // every call made is an expected one; some may be missing
	MatchSuperset = "superset"  // every expected call is made; others may be made too
)

// ToolExpect is the expected trajectory of tool calls.
type ToolExpect struct {
	// Match is the match mode; default exact.
	Match string       `yaml:"match"`
	Calls []CallExpect `yaml:"calls"`
}

// CallExpect is one expected tool call.
type CallExpect struct {
	Name string `yaml:"name"`
	// Args maps an argument's name to a regular expression its value must match:
	// a string as it is, another value as JSON.
	Args map[string]string `yaml:"args"`
	// Fails, when set, says whether the call fails (its result is an error).
	Fails *bool `yaml:"fails"`

	args map[string]*regexp.Regexp
}

// String describes c, for reports: name(arg~pattern, …).
func (c CallExpect) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(c.Args)) {
		parts = append(parts, k+"~"+c.Args[k])
	}
	s := c.Name + "(" + strings.Join(parts, ", ") + ")"
	if c.Fails != nil && *c.Fails {
		s += " failing"
	}
	return s
}

// Facts are what a text must and must not say. Contains and NotContains are texts,
// matched ignoring case; Matches and NotMatches regular expressions (RE2 syntax,
// case-sensitive unless they start with (?i)).
type Facts struct {
	Contains    []string `yaml:"contains"`
	NotContains []string `yaml:"not_contains"`
	Matches     []string `yaml:"matches"`
	NotMatches  []string `yaml:"not_matches"`

	matches, notMatches []*regexp.Regexp
}

// WorkflowExpect is the state a workflow run reaches.
type WorkflowExpect struct {
	// Name is the workflow's name (product-brief, proposal, blog, …).
	Name string `yaml:"name"`
	// Status is the run's status: running, completed or cancelled.
	Status string `yaml:"status"`
	// Artifacts maps an artifact's id to the status it reaches (pending,
	// options_generated, option_selected, generated, approved, stale, running).
	Artifacts map[string]string `yaml:"artifacts"`
	// Selected maps a choice artifact's id to the label of the option picked for it
	// (A, B, …), by a button or a typed reply.
	Selected map[string]string `yaml:"selected"`
	// Criteria lists the artifacts every criterion check of which passes; "all" for
	// every artifact with checks.
	Criteria []string `yaml:"criteria"`
	// Report lists texts the uploaded report must contain (ignoring case).
	Report []string `yaml:"report"`
}

// Bounds bound a run. Zero fields bound nothing.
type Bounds struct {
	// Tokens bounds the prompt and completion tokens of every model call of the run.
	Tokens int64 `yaml:"tokens"`
	// Cost bounds their cost in USD, priced by MODEL_PRICES; a model it does not
	// price fails the bound.
	Cost float64 `yaml:"cost"`
	// Latency bounds each step: from a person's action until the bot is done.
	Latency Duration `yaml:"latency"`
}

// Retrieval is a list of questions with the documents a search should find.
type Retrieval struct {
	// K is how many passages count (recall@k); default 5.
	K int `yaml:"k"`
	// MinRecall and MinMRR, when set, make the scores a check of the run.
	MinRecall float64    `yaml:"min_recall"`
	MinMRR    float64    `yaml:"min_mrr"`
	Questions []Question `yaml:"questions"`
}

// Question is a retrieval question.
type Question struct {
	Question string `yaml:"question"`
	// Expect are the sources ("handbook/leave.md") or passages ("handbook/leave.md —
	// Parental leave") a search for the question should find.
	Expect []string `yaml:"expect"`
}

// Duration is a time.Duration written as Go writes it ("90s", "2m").
type Duration time.Duration

// UnmarshalYAML reads a duration such as "90s".
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := time.ParseDuration(n.Value)
	if err != nil || v < 0 {
		return fmt.Errorf("line %d: expected a duration such as 90s or 2m, got %q", n.Line, n.Value)
	}
	*d = Duration(v)
	return nil
}
