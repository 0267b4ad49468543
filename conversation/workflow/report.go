package workflow

import (
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"
	"text/template"

	"gopkg.in/yaml.v3"
)

// DefaultReport is the report template of a workflow whose report is empty: the
// workflow's title, then every artifact, in declared order, under its title.
const DefaultReport = `# {{.Workflow.Title}}
{{range .Workflow.Artifacts}}
## {{.Title}}

{{artifact .ID}}
{{end}}`

// The markers the artifact function writes in a draft report (ReportData.Draft) for
// an artifact that is not approved.
const (
	// MarkerNotWritten stands in for an artifact that has no text yet.
	MarkerNotWritten = "_(not written yet)_"
	// MarkerNotApproved precedes, on a paragraph of its own, the text of an artifact
	// that is written but not approved.
	MarkerNotApproved = "_(draft, not approved yet)_"
)

// reportFuncs is the function map of report templates, bound to one rendering. Every
// function takes an artifact (or input) id and fails on an id the workflow does not declare, so
// a typo is caught when the workflow is validated.
func reportFuncs(d *Definition, data *ReportData) template.FuncMap {
	artifact := func(id string) (*Artifact, error) {
		a, ok := d.Artifact(id)
		if !ok {
			return nil, fmt.Errorf("no artifact %q in workflow %q", id, d.Name)
		}
		return a, nil
	}
	return template.FuncMap{
		// artifact "id": the artifact's text, trimmed. In a draft report an artifact
		// that is not approved renders as MarkerNotWritten when it has no text, and
		// otherwise as MarkerNotApproved, a blank line, then its text.
		"artifact": func(id string) (string, error) {
			if _, err := artifact(id); err != nil {
				return "", err
			}
			text := strings.TrimSpace(data.Artifacts[id])
			switch {
			case !data.Draft || data.Approved[id]:
				return text, nil
			case text == "":
				return MarkerNotWritten, nil
			default:
				return MarkerNotApproved + "\n\n" + text, nil
			}
		},
		// input "id": the input's value ("" when nobody filled it); an id the
		// workflow does not declare fails.
		"input": d.inputFuncs(data.Inputs)["input"],
		// title "id": the artifact's title.
		"title": func(id string) (string, error) {
			a, err := artifact(id)
			if err != nil {
				return "", err
			}
			return a.Title, nil
		},
		// approved "id": whether the artifact is approved.
		"approved": func(id string) (bool, error) {
			if _, err := artifact(id); err != nil {
				return false, err
			}
			return data.Approved[id], nil
		},
		// written "id": whether the artifact has text (approved or not).
		"written": func(id string) (bool, error) {
			if _, err := artifact(id); err != nil {
				return false, err
			}
			return strings.TrimSpace(data.Artifacts[id]) != "", nil
		},
	}
}

// RenderReport executes the workflow's report template with data and returns the
// Markdown document: surrounding white space trimmed, runs of blank lines collapsed
// to one, ending in a newline.
//
// data.Workflow defaults to d; an artifact missing from data.Artifacts has no text.
// When data.Draft is false every artifact renders as its text (an artifact without
// text renders as nothing). When data.Draft is true the artifact function marks the
// artifacts data.Approved does not hold as approved (MarkerNotWritten,
// MarkerNotApproved); .Artifacts in the template always holds the raw texts. Revision
// notes an editor left in a text (StripNotes) are left out.
//
// It fails only when the template does (a Definition from Parse was checked against
// sample data, so that means a bug, not a bad document).
func (d *Definition) RenderReport(data ReportData) (string, error) {
	t := d.report
	if t == nil { // a Definition built in Go and never validated
		var err error
		if t, err = parseReport(d, d.reportText()); err != nil {
			return "", fmt.Errorf("workflow %s: report: %w", d.Name, err)
		}
	}
	out, err := d.render(t, data)
	if err != nil {
		return "", fmt.Errorf("workflow %s: render report: %w", d.Name, err)
	}
	return out, nil
}

// render executes t, a parsed report template of d, with data.
func (d *Definition) render(t *template.Template, data ReportData) (string, error) {
	t, err := t.Clone() // Funcs on a clone: renderings run concurrently
	if err != nil {
		return "", err
	}
	if data.Workflow == nil {
		data.Workflow = d
	}
	texts := make(map[string]string, len(d.Artifacts))
	for _, a := range d.Artifacts {
		texts[a.ID] = ""
	}
	for id, text := range data.Artifacts {
		texts[id] = StripNotes(text)
	}
	data.Artifacts = texts
	data.Approved = maps.Clone(data.Approved)
	if data.Approved == nil {
		data.Approved = map[string]bool{}
	}
	t.Funcs(reportFuncs(d, &data))
	var b strings.Builder
	if err := t.Execute(&b, data); err != nil {
		return "", err
	}
	out := blankLines.ReplaceAllString(strings.TrimSpace(b.String()), "\n\n")
	return out + "\n", nil
}

var blankLines = regexp.MustCompile(`\n[ \t]*(\n[ \t]*)+\n`)

func (d *Definition) reportText() string {
	if strings.TrimSpace(d.Report) == "" {
		return DefaultReport
	}
	return d.Report
}

// parseReport parses a report template. Templates run with missingkey=error, so
// .Artifacts.typo fails instead of rendering "<no value>".
func parseReport(d *Definition, text string) (*template.Template, error) {
	return template.New("report").Option("missingkey=error").Funcs(reportFuncs(d, &ReportData{})).Parse(text)
}

// compileReport parses the report template and executes it on sample data, with
// every artifact written and approved and again as a draft with none, so that
// unknown artifact ids and fields fail validation rather than the final render.
func (d checking) compileReport(ps *problems, pos *positions) {
	t, err := parseReport(d.Definition, d.reportText())
	if err == nil {
		sample := ReportData{Workflow: d.Definition, Artifacts: map[string]string{}, Approved: map[string]bool{}}
		for _, a := range d.Artifacts {
			sample.Artifacts[a.ID] = "Sample text of " + a.ID + "."
			sample.Approved[a.ID] = true
		}
		if _, err = d.render(t, sample); err == nil {
			_, err = d.render(t, ReportData{Workflow: d.Definition, Draft: true})
		}
		if err == nil {
			d.report = t
		}
	}
	if err == nil {
		return
	}
	line := pos.def.at("report")
	m := templateError.FindStringSubmatch(err.Error())
	if m == nil {
		ps.addf(line, "report template: %v", err)
		return
	}
	tline, _ := strconv.Atoi(m[1])
	reason := m[3]
	if m[2] != "" {
		reason = m[2] + ": " + reason
	}
	if v := pos.report; v != nil && v.Style&yaml.LiteralStyle != 0 {
		// A literal block starts on the line after "report: |"; an error at the end
		// of the text (unexpected EOF) is on its last line.
		lines := strings.Count(strings.TrimRight(v.Value, "\n"), "\n") + 1
		line = v.Line + min(tline, lines)
	} else if v != nil && tline == 1 {
		line = v.Line
	}
	ps.addf(line, "report template line %d: %s", tline, reason)
}
