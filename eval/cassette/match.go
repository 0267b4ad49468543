package cassette

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// What a request may contain that changes from run to run without the prompt
// changing, and is masked before requests are compared (docs/eval.md, "Record and
// replay"): the workflow agent's excerpts of the other approved artifacts, which
// depend on which of two artifacts that a pipeline writes at once was approved
// first; Slack timestamps and permalink ids; dates and times (the executor's "Today
// is …", current_time's answer); and the references of recall, which hash the
// thread's timestamp.
var volatile = []struct {
	re   *regexp.Regexp
	mask string
}{
	{regexp.MustCompile(`(?s)\n\n## Other approved artifacts \(excerpts, for consistency\)\n.*?(\n\n## |\z)`), "$1"},
	{regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})`), "<time>"},
	{regexp.MustCompile(`\b(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), \d{1,2} (?:January|February|March|April|May|June|July|August|September|October|November|December) \d{4}\b`), "<date>"},
	{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}\b`), "<date>"},
	{regexp.MustCompile(`\b\d{1,2}:\d{2}(?::\d{2})?\b`), "<clock>"},
	{regexp.MustCompile(`\b\d{10}\.\d{6}\b`), "<ts>"},
	{regexp.MustCompile(`\bp\d{16}\b`), "<ts>"},
	{regexp.MustCompile(`\br[0-9a-f]{8}\b`), "<ref>"},
}

// Normalize returns the form of a chat completion request (its JSON body) in which
// recordings are matched: the JSON re-encoded with its object keys sorted and the
// volatile parts of its strings masked. Errors: a body that is not JSON.
func Normalize(body []byte) (string, error) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return "", fmt.Errorf("cassette: request: %w", err)
	}
	out, err := json.Marshal(mask(v))
	if err != nil {
		return "", fmt.Errorf("cassette: request: %w", err)
	}
	return string(out), nil
}

// mask masks the volatile parts of every string in v, a decoded JSON value.
func mask(v any) any {
	switch x := v.(type) {
	case string:
		for _, m := range volatile {
			x = m.re.ReplaceAllString(x, m.mask)
		}
		return x
	case []any:
		for i := range x {
			x[i] = mask(x[i])
		}
		return x
	case map[string]any:
		for k := range x {
			x[k] = mask(x[k])
		}
		return x
	}
	return v
}

// difference describes where the normalized requests got and near first differ:
// the message (messages[n] and its role) or the field, with some text of each around
// the first difference.
func difference(got, near string) string {
	var g, n map[string]any
	if json.Unmarshal([]byte(got), &g) != nil || json.Unmarshal([]byte(near), &n) != nil {
		return textDiff(got, near)
	}
	gm, _ := g["messages"].([]any)
	nm, _ := n["messages"].([]any)
	for i := range max(len(gm), len(nm)) {
		switch {
		case i >= len(gm):
			return fmt.Sprintf("messages[%d]: the recording has a %s message more", i, role(nm[i]))
		case i >= len(nm):
			return fmt.Sprintf("messages[%d]: the request has a %s message more", i, role(gm[i]))
		}
		a, _ := json.Marshal(gm[i])
		b, _ := json.Marshal(nm[i])
		if string(a) != string(b) {
			return fmt.Sprintf("messages[%d] (%s): %s", i, role(gm[i]), textDiff(string(a), string(b)))
		}
	}
	keys := map[string]bool{}
	for k := range g {
		keys[k] = true
	}
	for k := range n {
		keys[k] = true
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if k == "messages" {
			continue
		}
		a, _ := json.Marshal(g[k])
		b, _ := json.Marshal(n[k])
		if string(a) != string(b) {
			return fmt.Sprintf("%s: %s", k, textDiff(string(a), string(b)))
		}
	}
	return "no difference"
}

// role returns the role of a decoded message.
func role(m any) string {
	if o, ok := m.(map[string]any); ok {
		if r, ok := o["role"].(string); ok {
			return r
		}
	}
	return "?"
}

// textDiff shows the first difference of got and near with some text around it.
func textDiff(got, near string) string {
	i := 0
	for i < len(got) && i < len(near) && got[i] == near[i] {
		i++
	}
	const around = 50
	from := max(0, i-around)
	window := func(s string) string {
		a, b := min(from, len(s)), min(len(s), i+around)
		for a > 0 && !utf8.RuneStart(s[a]) {
			a--
		}
		for b < len(s) && !utf8.RuneStart(s[b]) {
			b++
		}
		return strings.ReplaceAll(s[a:b], `\n`, "⏎")
	}
	return fmt.Sprintf("recorded …%s… now …%s…", window(near), window(got))
}
