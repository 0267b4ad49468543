package conversation_test

import (
	"slices"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// A burst's messages come in the order the person sent them (by Slack ts), whatever
// order two replicas stored them in; a ts with more digits before the dot is later.
func TestBurstMessagesInSentOrder(t *testing.T) {
	msg := func(ts string) conversation.Input {
		return conversation.Input{ID: ts, Kind: conversation.KindUserMessage, Message: &conversation.UserMessage{TS: ts, Text: ts}}
	}
	in := msg("999999999.000200")
	in.Burst = []conversation.Input{msg("1000000000.000100"), msg("999999999.000300")}
	var got []string
	for _, m := range in.BurstMessages() {
		got = append(got, m.TS)
	}
	if want := []string{"999999999.000200", "999999999.000300", "1000000000.000100"}; !slices.Equal(got, want) {
		t.Fatalf("burst in order %v; want %v", got, want)
	}
	if ids := in.BurstIDs(); !slices.Equal(ids, []string{"1000000000.000100", "999999999.000300"}) {
		t.Fatalf("BurstIDs = %v", ids)
	}
	if _, err := conversation.ParseDoubleTexting("debounce"); err == nil {
		t.Fatal("an unknown policy parsed")
	}
}
