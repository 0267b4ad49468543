package render

import "strings"

// webSearch is the tool research needs a search service for.
const webSearch = "web_search"

// toolNotices are the lines that say which of the artifacts ids run without a tool
// they name (Cards.ToolAvailable: not configured, or not allowed in the channel),
// one a line; "" when none does (docs/workflows.md, "Pipelines"). Without web
// search the line says what the step draws on instead; other tools are named.
func (c Cards) toolNotices(ids []string) string {
	if c.ToolAvailable == nil {
		return ""
	}
	var lines []string
	for _, id := range ids {
		a, ok := c.Def.Artifact(id)
		if !ok {
			continue
		}
		var missing []string
		noWeb := false
		for _, name := range a.Tools {
			switch {
			case c.ToolAvailable(name):
			case name == webSearch:
				noWeb = true
			default:
				missing = append(missing, "`"+name+"`")
			}
		}
		if noWeb {
			lines = append(lines, "🔎 *"+a.Title+"*: "+Tr(c.Lang, "tools.no_web"))
		}
		if len(missing) > 0 {
			lines = append(lines, "🧰 *"+a.Title+"*: "+Tr(c.Lang, "tools.missing", strings.Join(missing, ", ")))
		}
	}
	return strings.Join(lines, "\n")
}
