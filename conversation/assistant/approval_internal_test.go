package assistant

import (
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
	if n := utf8.RuneCountInString(long); n > render.MaxShownArguments+20 || !strings.HasSuffix(long, "… (cut)") {
		t.Errorf("a long argument is shown with %d characters: ...%q", n, long[len(long)-40:])
	}
}

func TestApprovalCardButtons(t *testing.T) {
	key := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1.2"}
	ap := &conversation.ToolApproval{ID: "msg:T1:C1:1.2", UserID: "U1", Tool: conversation.PendingTool{Name: "crm__delete_customer", Arguments: `{}`, Reason: conversation.ApprovalAfterUntrusted}}
	c := render.ApprovalCard(key, ap)
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
