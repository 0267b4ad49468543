package assistant

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
)

func TestShownArguments(t *testing.T) {
	for _, c := range []struct {
		name, in   string
		want, lack []string
	}{
		{"JSONIndented", `{"id":"42","tags":["a"]}`, []string{"{\n  \"id\": \"42\",\n  \"tags\": [\n    \"a\"\n  ]\n}"}, nil},
		{"MentionsEscaped", `{"note":"<!channel> <@U123> <https://x.example|click> & more"}`,
			[]string{"&lt;!channel&gt;", "&lt;@U123&gt;", "&amp; more"}, []string{"<!", "<@", "<http"}},
		{"FenceBroken", "{\"code\":\"```\\nrm -rf /\\n```\"}", nil, []string{"```"}},
		{"NotJSON", "not json <!here>", []string{"not json &lt;!here&gt;"}, []string{"<!here>"}},
		{"Empty", "", []string{"{}"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := render.ShownArguments(c.in)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("shownArguments(%q) = %q, lacks %q", c.in, got, w)
				}
			}
			for _, l := range c.lack {
				if strings.Contains(got, l) {
					t.Errorf("shownArguments(%q) = %q, has %q", c.in, got, l)
				}
			}
		})
	}
	long := render.ShownArguments(`{"text":"` + strings.Repeat("é", 5000) + `"}`)
	if n := utf8.RuneCountInString(long); n > render.MaxShownValue+40 || !strings.HasSuffix(long, "… (4802 more characters)") {
		t.Errorf("a long argument is shown with %d characters: ...%q", n, long[len(long)-40:])
	}
}

// TestApprovalCardLongValue: a long body cannot hide the recipient. Every key is on
// the card, the body cut on its own; the card says the file has them all, and the
// file does; the call can be approved.
func TestApprovalCardLongValue(t *testing.T) {
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2"}
	body := strings.Repeat("Quarterly report, nothing to see. ", 48)[:1600]
	args := `{"to":"attacker@evil.example","body":"` + body + `","subject":"Q3"}`
	ap := &conversation.ToolApproval{ID: "a", UserID: "U1", Tool: conversation.PendingTool{Name: "mail__send", Arguments: args, Reason: conversation.ApprovalDestructive}}
	c := render.ApprovalCard("en", key, ap)
	shown := c.Blocks[1].Text
	for _, want := range []string{`"to": "attacker@evil.example"`, `"subject": "Q3"`, `"body": "Quarterly`, "more characters)"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the card's arguments lack %q:\n%s", want, shown)
		}
	}
	if note := c.Blocks[2].Text; !strings.Contains(note, "the file below has every argument in full") {
		t.Errorf("the card does not point to the file: %q", note)
	}
	if last := c.Blocks[len(c.Blocks)-1]; len(last.Buttons) != 2 || last.Buttons[0].Action.Name != conversation.ActionApproveTool {
		t.Errorf("buttons = %+v; want Approve and Deny", last.Buttons)
	}
	f := render.ArgumentsFile("en", ap.Tool)
	if f.Name != "mail__send-arguments.json" || !strings.Contains(string(f.Content), body) || !strings.Contains(string(f.Content), "attacker@evil.example") {
		t.Errorf("file %q = %s", f.Name, f.Content)
	}
}

// TestApprovalCardTooManyKeys: arguments whose keys do not all fit on the card have
// Deny alone, and the card says why and what to do.
func TestApprovalCardTooManyKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 400 {
		fmt.Fprintf(&b, `"k%03d":"%s",`, i, strings.Repeat("x", 50))
	}
	b.WriteString(`"zz_to":"attacker@evil.example"}`)
	ap := &conversation.ToolApproval{ID: "a", UserID: "U1", Tool: conversation.PendingTool{Name: "mail__send", Arguments: b.String()}}
	c := render.ApprovalCard("en", conversation.Key{ChannelID: "C1", ThreadTS: "1.2"}, ap)
	last := c.Blocks[len(c.Blocks)-1]
	if len(last.Buttons) != 1 || last.Buttons[0].Action.Name != conversation.ActionDenyTool {
		t.Errorf("buttons = %+v; want Deny alone", last.Buttons)
	}
	if !strings.Contains(c.Blocks[1].Text, "more keys, not shown") || !strings.Contains(c.Blocks[2].Text, "cannot be approved here") {
		t.Errorf("the card does not say why: %q / %q", c.Blocks[1].Text, c.Blocks[2].Text)
	}
}

func TestApprovalCardButtons(t *testing.T) {
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2"}
	ap := &conversation.ToolApproval{ID: "msg:T1:C1:1.2", UserID: "U1", Tool: conversation.PendingTool{Name: "crm__delete_customer", Arguments: `{}`, Reason: conversation.ApprovalAfterUntrusted}}
	c := render.ApprovalCard("en", key, ap)
	last := c.Blocks[len(c.Blocks)-1]
	if last.Kind != conversation.BlockActions || len(last.Buttons) != 2 {
		t.Fatalf("last block = %+v, want Approve and Deny", last)
	}
	for i, name := range []conversation.ActionName{conversation.ActionApproveTool, conversation.ActionDenyTool} {
		a := last.Buttons[i].Action
		if a.Name != name || a.Arg != ap.ID || a.Channel != "C1" || a.ThreadTS != "1.2" {
			t.Errorf("button %d action = %+v", i, a)
		}
		if _, err := a.Encode(); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(c.Blocks[0].Text, "Content from outside") {
		t.Errorf("the card does not say why: %q", c.Blocks[0].Text)
	}
}

// A card names the call it asks about: a re-run of the same input that asks for
// another call gets another id, so a click on the earlier card is out of date.
func TestApprovalIDNamesTheCall(t *testing.T) {
	call := conversation.PendingTool{CallID: "call_d", Name: "crm__delete_customer", Arguments: `{"id":"42"}`}
	same := approvalID("msg:T:C:1.0", &call)
	if again := approvalID("msg:T:C:1.0", &call); again != same {
		t.Fatalf("the same call got ids %q and %q", same, again)
	}
	other := call
	other.Arguments = `{"id":"43"}`
	renamed := call
	renamed.Name = "crm__delete_customers"
	for _, c := range []conversation.PendingTool{other, renamed, {CallID: "call_e", Name: call.Name, Arguments: call.Arguments}} {
		if id := approvalID("msg:T:C:1.0", &c); id == same || !strings.HasPrefix(id, "msg:T:C:1.0#") {
			t.Fatalf("call %+v got id %q (the first call's: %q)", c, id, same)
		}
	}
}
