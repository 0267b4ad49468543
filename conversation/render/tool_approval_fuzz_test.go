package render

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// FuzzApprovalCard holds the confirmation card's invariants for any arguments
// (docs/tools.md, "Tool policy"): the arguments' block fits Block Kit's 3,000
// characters of a section's text, cannot end its code block or form a mention or
// link; the card has Approve exactly when every top-level key of a JSON object is on
// it (each as its name, escaped, and cut to maxShownKey unless the arguments are
// shown whole); arguments that are not an object are approvable only when whole.
func FuzzApprovalCard(f *testing.F) {
	for _, seed := range []string{
		`{}`, ``, `not json <!here>`, `[1,2,3]`, `"just a string"`,
		`{"to":"attacker@evil.example","body":"` + strings.Repeat("x", 1600) + `","subject":"Q3"}`,
		`{"note":"<!channel> & <@U1>","code":"` + "```" + `"}`,
		`{"a":{"b":{"c":["` + strings.Repeat("é", 3000) + `"]}},"z":1}`,
		`{"` + strings.Repeat("k", 500) + `":1,"to":"x"}`,
		`{"to":"a","to":"b"}`,
		`{"&&&&&&&&":"` + strings.Repeat("&", 2000) + `"}`,
	} {
		f.Add(seed)
	}
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2"}
	f.Fuzz(func(t *testing.T, args string) {
		ap := &conversation.ToolApproval{ID: "a", UserID: "U1", Tool: conversation.PendingTool{Name: "mail__send", Arguments: args}}
		c := ApprovalCard("en", key, ap)
		block := c.Blocks[1].Text
		if n := utf8.RuneCountInString(block); n > 3000 {
			t.Fatalf("the arguments' section has %d characters, over Block Kit's 3,000", n)
		}
		inner := strings.TrimSuffix(strings.TrimPrefix(block, "```\n"), "\n```")
		if strings.Contains(inner, "```") || strings.ContainsAny(inner, "<>") {
			t.Fatalf("the arguments can end the code block or form a mention: %q", inner)
		}
		last := c.Blocks[len(c.Blocks)-1]
		approvable := len(last.Buttons) == 2 && last.Buttons[0].Action.Name == conversation.ActionApproveTool
		if last.Buttons[len(last.Buttons)-1].Action.Name != conversation.ActionDenyTool {
			t.Fatalf("the card has no Deny: %+v", last.Buttons)
		}
		shown := ShowArguments("en", args)
		if approvable != shown.Fits {
			t.Fatalf("Approve on the card = %v, but the arguments fit = %v", approvable, shown.Fits)
		}
		var obj map[string]any
		if json.Unmarshal([]byte(args), &obj) != nil || obj == nil {
			if approvable && !shown.Complete {
				t.Fatalf("arguments that are not an object are approvable but not shown whole: %q", inner)
			}
			return
		}
		if !approvable {
			return
		}
		for k := range obj {
			if !shown.Complete { // one key a line: names are cut
				k = textcut.Ellipsis(k, maxShownKey, nil)
			}
			name, _ := json.Marshal(k)
			want := slackCode(strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(name)))
			if !strings.Contains(inner, want+": ") {
				t.Fatalf("key %q is not on an approvable card:\n%s", k, inner)
			}
		}
	})
}
