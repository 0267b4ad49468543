package bot

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

// TestStripMention: the bot's mentions go, with the spaces after them; others stay;
// and a message of many mentions is read once (its allocations do not grow with
// their number: it runs on the connection's loop, before the ack).
func TestStripMention(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"<@UBOT> hello", "hello"},
		{"hello <@UBOT|bot>   there", "hello there"},
		{"<@UBOT><@UBOT> <@UALICE> hi", "<@UALICE> hi"},
		{"<@UBOTX> hi", "<@UBOTX> hi"},
		{"  plain  ", "plain"},
	} {
		if got := stripMention(c.in, "UBOT"); got != c.want {
			t.Errorf("stripMention(%q) = %q; want %q", c.in, got, c.want)
		}
	}
	many := strings.Repeat("<@UBOT> a ", 4000)
	if got := stripMention(many, "UBOT"); got != strings.TrimSpace(strings.Repeat("a ", 4000)) {
		t.Fatalf("stripMention of 4,000 mentions = %.40q…", got)
	}
	if allocs := testing.AllocsPerRun(3, func() { stripMention(many, "UBOT") }); allocs > 64 {
		t.Errorf("stripMention of 4,000 mentions allocated %v times; want a few (one pass)", allocs)
	}
}

// TestLaneOf: an envelope's input goes on its thread's lane; feedback on its
// answer's, so that two clicks on one answer are stored in the order they came, and
// not behind the thread's inputs; anything else on the envelope's own.
func TestLaneOf(t *testing.T) {
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100"}
	if got := laneOf("env-1", &conversation.Input{Key: k}, nil); got != k.String() {
		t.Errorf("an input's lane %q; want its thread's, %q", got, k.String())
	}
	up := laneOf("env-2", nil, &conversation.Feedback{Key: k, MessageTS: "1700000000.000300"})
	down := laneOf("env-4", nil, &conversation.Feedback{Key: k, MessageTS: "1700000000.000300", Rating: conversation.RatingNegative})
	if up != down || up == k.String() || up == "env-2" {
		t.Errorf("feedback's lanes %q and %q; want one of the answer's own", up, down)
	}
	if other := laneOf("env-5", nil, &conversation.Feedback{Key: k, MessageTS: "1700000000.000900"}); other == up {
		t.Errorf("two answers' feedback share lane %q", other)
	}
	if got := laneOf("env-3", nil, nil); got != "env-3" {
		t.Errorf("lane %q; want the envelope's own", got)
	}
}
