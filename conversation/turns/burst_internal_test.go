package turns

import (
	"slices"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// A burst is the person's messages that follow the one begun, up to another kind of
// input or another author: a click, or a colleague's reply, is answered on its own.
func TestBurstOf(t *testing.T) {
	msg := func(id, user string) conversation.Input {
		return conversation.Input{ID: id, Kind: conversation.KindUserMessage, Message: &conversation.UserMessage{UserID: user, Text: id}}
	}
	click := conversation.Input{ID: "click", Kind: conversation.KindAction, Action: &conversation.ActionInput{UserID: "U1"}}
	first := msg("m1", "U1")
	for _, c := range []struct {
		name    string
		pending []conversation.Input
		want    []string
	}{
		{"Alone", []conversation.Input{first}, nil},
		{"Burst", []conversation.Input{first, msg("m2", "U1"), msg("m3", "U1")}, []string{"m2", "m3"}},
		{"AnotherAuthorEndsIt", []conversation.Input{first, msg("m2", "U1"), msg("m3", "U2"), msg("m4", "U1")}, []string{"m2"}},
		{"AClickEndsIt", []conversation.Input{first, click, msg("m3", "U1")}, nil},
		{"BegunNotFirst", []conversation.Input{msg("m0", "U1"), first, msg("m2", "U1")}, []string{"m2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, in := range burstOf(first, c.pending) {
				got = append(got, in.ID)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("burst %v; want %v", got, c.want)
			}
		})
	}
	var many []conversation.Input
	many = append(many, first)
	for range maxBurst + 5 {
		many = append(many, msg("m", "U1"))
	}
	if n := len(burstOf(first, many)); n != maxBurst {
		t.Fatalf("burst of %d messages; want at most %d", n, maxBurst)
	}
}
