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

// TestLaneOf: an envelope's input and its feedback go on their thread's lane, so
// that a thread's clicks are stored in the order they came; anything else on the
// envelope's own.
func TestLaneOf(t *testing.T) {
	k := conversation.Key{TeamID: "T1", ChannelID: "C1", ThreadTS: "1700000000.000100"}
	if got := laneOf("env-1", &conversation.Input{Key: k}, nil); got != k.String() {
		t.Errorf("an input's lane %q; want its thread's, %q", got, k.String())
	}
	if got := laneOf("env-2", nil, &conversation.Feedback{Key: k}); got != k.String() {
		t.Errorf("feedback's lane %q; want its thread's, %q", got, k.String())
	}
	if got := laneOf("env-3", nil, nil); got != "env-3" {
		t.Errorf("lane %q; want the envelope's own", got)
	}
}
