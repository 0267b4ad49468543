package eval

// Small text helpers of the package's reports and checks.

import (
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"slices"
	"strings"

	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/playground/emulator"
)

// clip cuts s to n bytes, marked.
func clip(s string, n int) string { return textcut.BytesMark(s, n, "…") }

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func quoteAll(ss []string) string {
	if len(ss) == 0 {
		return "none"
	}
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// messageText returns what a message shows: its text and the texts of its blocks,
// with Slack's escapes undone.
func messageText(m emulator.Message) string {
	parts := []string{m.Text}
	if len(m.Blocks) > 0 {
		var blocks any
		if json.Unmarshal(m.Blocks, &blocks) == nil {
			for _, t := range blockTexts(blocks, nil) {
				if t != m.Text && !slices.Contains(parts, t) {
					parts = append(parts, t)
				}
			}
		}
	}
	return html.UnescapeString(strings.Join(parts, "\n"))
}

// blockTexts appends the "text" strings of decoded Block Kit JSON v to out, leaving
// out the labels of buttons and menus.
func blockTexts(v any, out []string) []string {
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			out = blockTexts(e, out)
		}
	case map[string]any:
		switch x["type"] {
		case "button", "overflow", "static_select", "actions":
			return out // controls, not content
		}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if s, ok := x[k].(string); ok && k == "text" {
				if s != "" {
					out = append(out, s)
				}
				continue
			}
			out = blockTexts(x[k], out)
		}
	}
	return out
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func appendNew(list []string, more ...string) []string {
	for _, s := range more {
		found := false
		for _, l := range list {
			found = found || l == s
		}
		if !found {
			list = append(list, s)
		}
	}
	return list
}

func money(usd float64, priced bool) string {
	if !priced {
		return "?"
	}
	return fmt.Sprintf("$%.4f", usd)
}

// thousands writes n with thousands separators.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}
