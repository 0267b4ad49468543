package workflow

import (
	"fmt"
	"slices"
	"strings"
)

// Artifact returns the artifact called id.
func (d *Definition) Artifact(id string) (*Artifact, bool) {
	for i := range d.Artifacts {
		if d.Artifacts[i].ID == id {
			return &d.Artifacts[i], true
		}
	}
	return nil, false
}

// Order returns the artifact ids in the order they are worked on: every artifact
// after the artifacts it depends on, and otherwise in declared order (a stable
// topological sort). For a workflow whose depends_on only name earlier artifacts it
// is the declared order.
func (d *Definition) Order() []string {
	if d.order != nil {
		return slices.Clone(d.order)
	}
	return d.computeOrder()
}

// computeOrder sorts topologically, taking each time the first declared artifact
// whose dependencies are all placed. Unknown dependencies are ignored; a cycle (only
// possible in a Definition that failed validation) is broken in declared order.
func (d *Definition) computeOrder() []string {
	known := map[string]bool{}
	for _, a := range d.Artifacts {
		known[a.ID] = true
	}
	placed := map[string]bool{}
	order := make([]string, 0, len(d.Artifacts))
	ready := func(a Artifact) bool {
		for _, dep := range a.DependsOn {
			if known[dep] && !placed[dep] && dep != a.ID {
				return false
			}
		}
		return true
	}
	for len(order) < len(d.Artifacts) {
		pick := -1
		for i, a := range d.Artifacts {
			if !placed[a.ID] && ready(a) {
				pick = i
				break
			}
		}
		if pick < 0 { // a cycle: take the first unplaced artifact
			for i, a := range d.Artifacts {
				if !placed[a.ID] {
					pick = i
					break
				}
			}
		}
		if pick < 0 {
			break // duplicate ids: every id is placed
		}
		id := d.Artifacts[pick].ID
		placed[id] = true
		order = append(order, id)
	}
	return order
}

// Dependencies returns the ids of the artifacts id depends on directly, in Order;
// nil when there are none or id is unknown.
func (d *Definition) Dependencies(id string) []string {
	a, ok := d.Artifact(id)
	if !ok || len(a.DependsOn) == 0 {
		return nil
	}
	var deps []string
	for _, o := range d.Order() {
		if slices.Contains(a.DependsOn, o) {
			deps = append(deps, o)
		}
	}
	return deps
}

// Dependents returns the ids of every artifact that depends on id, directly or
// through others, in Order and without id itself: the artifacts that go stale when
// id is edited or restarted. It is nil when there are none or id is unknown.
func (d *Definition) Dependents(id string) []string {
	if _, ok := d.Artifact(id); !ok {
		return nil
	}
	found := map[string]bool{id: true}
	queue := []string{id}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		for _, a := range d.Artifacts {
			if !found[a.ID] && slices.Contains(a.DependsOn, cur) {
				found[a.ID] = true
				queue = append(queue, a.ID)
			}
		}
	}
	var out []string
	for _, o := range d.Order() {
		if o != id && found[o] {
			out = append(out, o)
		}
	}
	return out
}

// ToolKind is what a workflow's validation knows of a tool without connecting to it
// (TaintWarnings): whether its output may be untrusted content, and whether it only
// reads.
type ToolKind func(tool string) (untrusted, readOnly bool)

// TaintWarnings returns a warning for each artifact of d that names a tool with
// side effects (one kind does not call read-only) while untrusted content may reach
// its writer (docs/tools.md, "Tool policy"): a fetch artifact, or one naming a tool
// kind calls untrusted, is tainted, and every approved text is in a writer's prompt,
// so any other artifact of the workflow may read it. Such a writer's call is refused
// when it runs for an auto artifact (nobody can confirm it there), and waits for a
// person's confirmation for another (docs/workflows.md, "Tools and untrusted
// content"). The warnings are about the file as a
// whole (Line 0); a workflow without them returns nil.
func (d *Definition) TaintWarnings(kind ToolKind) []Problem {
	var sources []string
	for _, a := range d.Artifacts {
		untrusted := a.Fetch != ""
		for _, t := range a.Tools {
			u, _ := kind(t)
			untrusted = untrusted || u
		}
		if untrusted {
			sources = append(sources, a.ID)
		}
	}
	if len(sources) == 0 {
		return nil
	}
	var out []Problem
	for _, a := range d.Artifacts {
		var effects []string
		for _, t := range a.Tools {
			if _, ro := kind(t); !ro && !slices.Contains(effects, t) {
				effects = append(effects, t)
			}
		}
		if len(effects) == 0 {
			continue
		}
		then := "such a call waits for the confirmation of the person who asked for the text, on a card in the thread"
		if a.Mode == ModeAuto {
			then = "such a call is refused when it runs, since nobody can confirm it there"
		}
		out = append(out, Problem{File: d.Source, Reason: fmt.Sprintf(
			"warning: artifact %s names %s, which may change something, but its writer may read untrusted content (from %s): %s",
			a.ID, strings.Join(effects, ", "), strings.Join(sources, ", "), then)})
	}
	return out
}
