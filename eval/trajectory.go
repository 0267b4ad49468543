package eval

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/threadwright/threadwright/internal/textcut"
)

// matchTrajectory reports whether the tool runs got match the expected calls in
// mode (MatchExact, …).
func matchTrajectory(mode string, want []CallExpect, got []ToolRun) bool {
	match := func(i, j int) bool { return want[i].matches(got[j]) }
	switch mode {
	case MatchExact:
		if len(want) != len(got) {
			return false
		}
		for i := range want {
			if !match(i, i) {
				return false
			}
		}
		return true
	case MatchInOrder:
		i := 0
		for j := range got {
			if i < len(want) && match(i, j) {
				i++ // the earliest run that matches: a subsequence exists iff this finds it
			}
		}
		return i == len(want)
	case MatchAnyOrder:
		return len(want) == len(got) && maxMatching(len(want), len(got), match) == len(want)
	case MatchSuperset:
		return maxMatching(len(want), len(got), match) == len(want)
	case MatchSubset:
		return maxMatching(len(want), len(got), match) == len(got)
	}
	return false
}

// maxMatching returns the size of a maximum matching between n expected and m actual
// calls, where edge(i, j) says that expected i matches actual j (Kuhn's augmenting
// paths; the lists are short).
func maxMatching(n, m int, edge func(i, j int) bool) int {
	owner := make([]int, m) // actual j → the expected call matched to it, or -1
	for j := range owner {
		owner[j] = -1
	}
	var try func(i int, seen []bool) bool
	try = func(i int, seen []bool) bool {
		for j := range m {
			if seen[j] || !edge(i, j) {
				continue
			}
			seen[j] = true
			if owner[j] < 0 || try(owner[j], seen) {
				owner[j] = i
				return true
			}
		}
		return false
	}
	size := 0
	for i := range n {
		if try(i, make([]bool, m)) {
			size++
		}
	}
	return size
}

// matches reports whether the run r is the call c expects: the same tool, every
// argument pattern matching, and failing or not as c says.
func (c CallExpect) matches(r ToolRun) bool {
	if c.Name != r.Name {
		return false
	}
	if c.Fails != nil && *c.Fails != (r.Error != "") {
		return false
	}
	if len(c.args) == 0 {
		return true
	}
	var args map[string]json.RawMessage
	if json.Unmarshal(r.Arguments, &args) != nil {
		return false
	}
	for name, re := range c.args {
		raw, ok := args[name]
		if !ok {
			return false
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			s = string(raw) // not a string: its JSON
		}
		if !re.MatchString(s) {
			return false
		}
	}
	return true
}

// describeRuns lists tool runs for a report: name(arguments), failing ones marked.
func describeRuns(runs []ToolRun) string {
	if len(runs) == 0 {
		return "no tool calls"
	}
	parts := make([]string, len(runs))
	for i, r := range runs {
		args := strings.Join(strings.Fields(string(r.Arguments)), " ")
		if args == "{}" || args == "" {
			args = ""
		}
		parts[i] = r.Name + "(" + textcut.BytesMark(args, 120, textcut.Truncated) + ")"
		if r.Error != "" {
			parts[i] += " failed"
		}
	}
	return strings.Join(parts, ", ")
}

// describeCalls lists expected calls for a report.
func describeCalls(calls []CallExpect) string {
	if len(calls) == 0 {
		return "no tool calls"
	}
	parts := make([]string, len(calls))
	for i, c := range calls {
		parts[i] = c.String()
	}
	return strings.Join(parts, ", ")
}

// trajectoryDetail explains a trajectory check.
func trajectoryDetail(mode string, want []CallExpect, got []ToolRun) string {
	return fmt.Sprintf("expected %s (%s); got %s", describeCalls(want), mode, describeRuns(got))
}
