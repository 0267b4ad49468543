package workflow

import (
	"fmt"
	"slices"
	"strings"
)

// Validate fills the defaults of a Definition built in Go (rather than by Parse) and
// checks it as Parse does; problems carry Line 0 and File d.Source. Call it once,
// before the definition is shared: it writes to d.
func (d *Definition) Validate() error {
	ps := &problems{file: d.Source}
	checking{d}.check(ps, &positions{})
	return ps.err()
}

// checking is a Definition being checked (Parse, Validate): the methods that fill its
// defaults and add a problem for everything wrong, apart from the Definition's own.
type checking struct{ *Definition }

// check fills defaults, validates d and prepares its order and report template,
// adding a problem for everything wrong. pos gives the lines (zero for a Definition
// built in Go).
func (d checking) check(ps *problems, pos *positions) {
	dp := pos.def
	d.line = dp.at("name")
	checkName(ps, dp, d.Name, d.Title)
	d.checkPermissions(ps, dp, pos.permissions)
	d.checkInputs(ps, pos)
	if d.Locale != "" && !localeRE.MatchString(d.Locale) {
		ps.addf(dp.at("locale"), "locale %q is not a BCP 47 language tag (like \"en\", \"ru\", \"pt-BR\")", d.Locale)
	}
	checkShare(ps, d.PassShare, dp, "pass_share")
	if len(d.Artifacts) == 0 && dp.ok("artifacts") {
		ps.addf(dp.at("artifacts"), "missing artifacts: a workflow needs at least one artifact")
	}

	index := map[string]int{} // artifact id → index of its first declaration
	for i := range d.Artifacts {
		a, ap := &d.Artifacts[i], pos.artifact(i)
		what := checkArtifactID(ps, pos, i, a.ID, index)
		a.checkFields(ps, ap, what)
		d.checkCriteria(ps, a, ap, what)
	}

	ids := make([]string, 0, len(index))
	for id := range index {
		ids = append(ids, id)
	}
	slices.Sort(ids) // nearest takes the first of equally near ids
	for i, a := range d.Artifacts {
		ap := pos.artifact(i)
		checkDependsOn(ps, ap, a, index, ids)
		checkForeach(ps, ap, a, index, ids)
		d.checkSources(ps, ap, a, index, ids) // sources.go
	}
	d.checkCycles(ps, pos, index)
	d.order = d.computeOrder()
	d.compileReport(ps, pos)
	d.checkPrompts(ps, pos)
	d.checkPasses(ps, pos) // passes.go
}

// checkName checks the workflow's name and title, at dp.
func checkName(ps *problems, dp position, name, title string) {
	switch {
	case name == "":
		if dp.ok("name") {
			ps.addf(dp.at("name"), "missing name: the workflow's id in commands, like name: proposal")
		}
	case !nameRE.MatchString(name):
		ps.addf(dp.at("name"), "name %q is invalid: use lower-case letters, digits and \"-\", starting with a letter or digit", name)
	}
	if title == "" && dp.ok("title") {
		ps.addf(dp.at("title"), "missing title: the workflow's name as people read it, like title: Grant proposal")
	}
}

// checkArtifactID checks id, the id of artifact i, records it in index (artifact id
// → index of its first declaration), and returns how problems name the artifact.
func checkArtifactID(ps *problems, pos *positions, i int, id string, index map[string]int) (what string) {
	ap := pos.artifact(i)
	what = fmt.Sprintf("artifact #%d", i+1)
	switch {
	case id == "":
		if ap.ok("id") {
			ps.addf(ap.at("id"), "%s: missing id", what)
		}
	case !artifactIDRE.MatchString(id):
		ps.addf(ap.at("id"), "artifact id %q is invalid: use lower-case letters, digits and \"_\", starting with a letter or digit", id)
	default:
		if j, dup := index[id]; dup {
			ps.addf(ap.at("id"), "duplicate artifact id %q (first at line %d)", id, pos.artifact(j).at("id"))
		} else {
			index[id] = i
		}
	}
	if id != "" {
		what = fmt.Sprintf("artifact %q", id)
	}
	return what
}

// checkFields fills the defaults of a, the artifact what, and checks the fields it
// declares on its own: title, mode and options, pipeline and pass_share.
func (a *Artifact) checkFields(ps *problems, ap artifactPosition, what string) {
	if a.Title == "" && ap.ok("title") {
		ps.addf(ap.at("title"), "%s: missing title", what)
	}
	a.checkMode(ps, ap, what)
	a.checkPipeline(ps, ap, what)
	checkShare(ps, a.PassShare, ap.position, what+": pass_share")
}

// checkMode fills a's default mode (draft) and options, and checks them.
func (a *Artifact) checkMode(ps *problems, ap artifactPosition, what string) {
	if a.Mode == "" {
		a.Mode = ModeDraft
	}
	switch a.Mode {
	case ModeChoice:
		if a.Options == 0 && !ap.has("options") {
			a.Options = DefaultOptions
		} else if (a.Options < 2 || a.Options > MaxOptions) && ap.ok("options") {
			ps.addf(ap.at("options"), "%s: options must be between 2 and %d, got %d", what, MaxOptions, a.Options)
		}
	case ModeDraft, ModeAuto:
		if a.Options != 0 || ap.has("options") {
			ps.addf(ap.at("options"), "%s: options is only for mode %s (mode is %s)", what, ModeChoice, a.Mode)
		}
	default:
		ps.addf(ap.at("mode"), "%s: mode %q is invalid: use %s, %s or %s", what, a.Mode, ModeChoice, ModeDraft, ModeAuto)
	}
}

// checkCriteria checks the criteria of a: their ids (unique within a), descriptions
// and checks.
func (d checking) checkCriteria(ps *problems, a *Artifact, ap artifactPosition, what string) {
	criteria := map[string]int{} // criterion id → line
	for j, c := range a.Criteria {
		cp := ap.criterion(j)
		cwhat := fmt.Sprintf("%s: criterion #%d", what, j+1)
		switch {
		case c.ID == "":
			if cp.ok("id") {
				ps.addf(cp.at("id"), "%s: missing id", cwhat)
			}
		case !artifactIDRE.MatchString(c.ID):
			ps.addf(cp.at("id"), "%s: criterion id %q is invalid: use lower-case letters, digits and \"_\"", what, c.ID)
		default:
			if first, dup := criteria[c.ID]; dup {
				ps.addf(cp.at("id"), "%s: duplicate criterion id %q (first at line %d)", what, c.ID, first)
			} else {
				criteria[c.ID] = cp.at("id")
			}
		}
		if c.ID != "" {
			cwhat = fmt.Sprintf("%s: criterion %q", what, c.ID)
		}
		if c.Description == "" && cp.ok("description") {
			ps.addf(cp.at("description"), "%s: missing description: what the evaluator checks", cwhat)
		}
		d.checkCheck(ps, a, c.Check, cp, cwhat)
	}
}

// checkDependsOn checks the depends_on of a: no empty entry, none twice, and only
// artifacts in index (ids: their ids, sorted, for a suggestion).
func checkDependsOn(ps *problems, ap artifactPosition, a Artifact, index map[string]int, ids []string) {
	seen := map[string]bool{}
	for j, dep := range a.DependsOn {
		line := ap.dependency(j)
		switch _, known := index[dep]; {
		case dep == "":
			ps.addf(line, "artifact %q: depends_on has an empty entry", a.ID)
		case seen[dep]:
			ps.addf(line, "artifact %q: depends_on lists %q twice", a.ID, dep)
		case !known:
			reason := fmt.Sprintf("artifact %q: depends_on names unknown artifact %q", a.ID, dep)
			if s := nearest(dep, ids); s != "" {
				reason += fmt.Sprintf(" (did you mean %q?)", s)
			}
			ps.addf(line, "%s", reason)
		}
		seen[dep] = true
	}
}

// checkShare reports a pass share outside (0, 1]; what names it, and p gives the line
// of its pass_share key.
func checkShare(ps *problems, share *float64, p position, what string) {
	if share == nil || !p.ok("pass_share") {
		return
	}
	if *share <= 0 || *share > 1 {
		ps.addf(p.at("pass_share"), "%s must be more than 0 and at most 1 (the share of non-critical criteria that must pass), got %g", what, *share)
	}
}

// checkPipeline checks the fields of a's pipeline: foreach, retries and concurrency
// (auto only), editor, model and tools. what names a in problems; the foreach target
// is checkForeach's.
func (a *Artifact) checkPipeline(ps *problems, ap artifactPosition, what string) {
	valid := a.Mode == ModeChoice || a.Mode == ModeDraft || a.Mode == ModeAuto
	if valid && a.Mode != ModeAuto {
		for _, f := range []struct {
			key string
			set bool
		}{{"foreach", a.Foreach != ""}, {"retries", a.Retries != 0}, {"concurrency", a.Concurrency != 0}} {
			if (f.set || ap.has(f.key)) && ap.ok(f.key) {
				ps.addf(ap.at(f.key), "%s: %s needs mode: %s (mode is %s)", what, f.key, ModeAuto, a.Mode)
			}
		}
	}
	if (a.Retries < 0 || a.Retries > MaxRetries) && ap.ok("retries") {
		ps.addf(ap.at("retries"), "%s: retries must be between 0 and %d, got %d", what, MaxRetries, a.Retries)
	}
	if (a.Concurrency < 0 || a.Concurrency > MaxConcurrency) && ap.ok("concurrency") {
		ps.addf(ap.at("concurrency"), "%s: concurrency must be between 1 and %d (0 or none: the deployment's PIPELINE_CONCURRENCY), got %d", what, MaxConcurrency, a.Concurrency)
	}
	if a.Model != "" && !profileRE.MatchString(a.Model) {
		ps.addf(ap.at("model"), "%s: model %q is invalid: a model profile name (MODEL_PROFILES) uses lower-case letters, digits, \"_\" and \"-\", starting with a letter or digit", what, a.Model)
	}
	if a.PreferModel != "" && !profileRE.MatchString(a.PreferModel) {
		ps.addf(ap.at("prefer_model"), "%s: prefer_model %q is invalid: a model profile name (MODEL_PROFILES) uses lower-case letters, digits, \"_\" and \"-\", starting with a letter or digit", what, a.PreferModel)
	}
	if a.Model != "" && a.PreferModel != "" {
		ps.addf(ap.at("prefer_model"), "%s: prefer_model and model both name a profile: keep model (the profile must be defined) or prefer_model (the main model writes when it is not)", what)
	}
	if e := a.Editor; e != nil {
		if e.Prompt == "" && ap.editor.ok("prompt") {
			ps.addf(ap.editorAt("prompt"), "%s: editor: missing prompt: what the editor does, like prompt: Tighten the prose, keep every fact", what)
		}
		if e.Model != "" && !profileRE.MatchString(e.Model) {
			ps.addf(ap.editorAt("model"), "%s: editor: model %q is invalid: a model profile name (MODEL_PROFILES) uses lower-case letters, digits, \"_\" and \"-\", starting with a letter or digit", what, e.Model)
		}
	}
	if len(a.Tools) > 0 && a.Mode == ModeChoice {
		ps.addf(ap.at("tools"), "%s: tools need mode %s or %s: a %s artifact's options are written without them", what, ModeDraft, ModeAuto, ModeChoice)
	}
	seen := map[string]bool{}
	for j, tool := range a.Tools {
		line := ap.tool(j)
		switch {
		case tool == "":
			if ap.ok("tools") {
				ps.addf(line, "%s: tools has an empty entry", what)
			}
		case !toolRE.MatchString(tool):
			ps.addf(line, "%s: tool %q is invalid: use lower-case letters, digits and \"_\" (an MCP tool is server__tool)", what, tool)
		case seen[tool]:
			ps.addf(line, "%s: tools lists %q twice", what, tool)
		}
		seen[tool] = true
	}
}

// checkForeach checks that a's foreach names an earlier dependency: an artifact of
// d listed in a's depends_on, other than a. index maps the known ids to their
// artifact, ids lists them for suggestions.
func checkForeach(ps *problems, ap artifactPosition, a Artifact, index map[string]int, ids []string) {
	if a.Foreach == "" {
		return
	}
	line := ap.at("foreach")
	_, known := index[a.Foreach]
	switch {
	case a.Foreach == a.ID:
		ps.addf(line, "artifact %q: foreach names the artifact itself: name an earlier dependency whose items it is written for", a.ID)
	case !known:
		reason := fmt.Sprintf("artifact %q: foreach names unknown artifact %q", a.ID, a.Foreach)
		if s := nearest(a.Foreach, ids); s != "" {
			reason += fmt.Sprintf(" (did you mean %q?)", s)
		}
		ps.addf(line, "%s", reason)
	case !slices.Contains(a.DependsOn, a.Foreach):
		ps.addf(line, "artifact %q: foreach: %q is not an earlier dependency of %q: add it to depends_on", a.ID, a.Foreach, a.ID)
	}
}

// Profiles returns the model profile names (MODEL_PROFILES) d uses, sorted and
// without repeats: every artifact's Model and Editor.Model. Start-up checks that
// each is configured; nil when d uses only the main model.
func (d *Definition) Profiles() []string {
	var names []string
	for _, a := range d.Artifacts {
		if a.Model != "" {
			names = append(names, a.Model)
		}
		if a.Editor != nil && a.Editor.Model != "" {
			names = append(names, a.Editor.Model)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// checkCycles reports one cycle per strongly connected component of the dependency
// graph ("a → b → a": a depends on b, which depends on a), at the depends_on entry
// of the cycle's first-declared artifact.
func (d checking) checkCycles(ps *problems, pos *positions, index map[string]int) {
	n := len(d.Artifacts)
	edges := make([][]int, n) // i → the artifacts i depends on
	for i, a := range d.Artifacts {
		if j, ok := index[a.ID]; !ok || j != i {
			continue // no id or a duplicate one, already reported
		}
		for _, dep := range a.DependsOn {
			if j, ok := index[dep]; ok && !slices.Contains(edges[i], j) {
				edges[i] = append(edges[i], j)
			}
		}
	}
	for _, scc := range components(edges) {
		start := slices.Min(scc)
		if len(scc) == 1 && !slices.Contains(edges[start], start) {
			continue
		}
		path := shortestCycle(edges, scc, start)
		names := make([]string, len(path))
		for k, i := range path {
			names[k] = d.Artifacts[i].ID
		}
		line := pos.artifact(start).at("depends_on")
		if j := slices.Index(d.Artifacts[start].DependsOn, names[1]); j >= 0 {
			line = pos.artifact(start).dependency(j)
		}
		ps.addf(line, "dependency cycle: %s (each depends on the next)", strings.Join(names, " → "))
	}
}

// components returns the strongly connected components of the graph (Tarjan).
func components(edges [][]int) [][]int {
	n := len(edges)
	index, low := make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	var (
		stack  []int
		next   int
		result [][]int
		visit  func(v int)
	)
	visit = func(v int) {
		index[v], low[v] = next, next
		next++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range edges[v] {
			if index[w] < 0 {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var scc []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				scc = append(scc, w)
				if w == v {
					break
				}
			}
			result = append(result, scc)
		}
	}
	for v := range n {
		if index[v] < 0 {
			visit(v)
		}
	}
	slices.SortFunc(result, func(a, b []int) int { return slices.Min(a) - slices.Min(b) })
	return result
}

// shortestCycle returns the shortest path start → … → start inside scc, found
// breadth first (edges in declared order, so the result is deterministic).
func shortestCycle(edges [][]int, scc []int, start int) []int {
	prev := map[int]int{}
	queue := []int{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		for _, w := range edges[v] {
			if !slices.Contains(scc, w) {
				continue
			}
			if w == start {
				path := []int{start}
				for u := v; u != start; u = prev[u] {
					path = append(path, u)
				}
				slices.Reverse(path[1:])
				return append(path, start)
			}
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	return []int{start, start} // unreachable for a real component
}
