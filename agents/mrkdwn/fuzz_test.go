package mrkdwn_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents/mrkdwn"
)

// maxMrkdwnGrowth bounds FromMarkdown's output: at most maxMrkdwnGrowth bytes for each
// byte of input, plus a constant. A table row of two bytes ("||") can be padded to a
// row of MaxTableWidth characters, the largest growth there is.
const maxMrkdwnGrowth = mrkdwn.MaxTableWidth / 2

// FuzzFromMarkdown checks that no special mention (<!here>, <!channel>, <!subteam^…>)
// survives the conversion and that the output grows at most linearly with the input.
func FuzzFromMarkdown(f *testing.F) {
	for _, seed := range []string{
		"**bold** <!channel> and <!here|here> <!subteam^S123|@team> <!date^1392734382^{date}|Feb>",
		"<@U123> asks <#C123|general>: `<!everyone>` ```\n<!here>\n```",
		"[<!channel>](https://e.com/<!here>) <https://e.com|<!channel>> https://e.com/?<!here>",
		"| a | b |\n|---|---|\n| " + strings.Repeat("wide ", 200) + " | <!here> |\n" + strings.Repeat("||\n", 200),
		"|" + strings.Repeat(" c |", 40) + "\n|" + strings.Repeat("-|", 40) + "\n" + strings.Repeat("||||\n", 20),
		"# <!channel>\n> <!here>\n- [ ] <!everyone>\n\t\t- item\n---\n1. <!subteam^S1>",
		"<\uE0000\uE001!channel> <<!here>> &lt;!here&gt; <!", "\r\n<br><!here>",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, md string) {
		out := mrkdwn.FromMarkdown(md)
		if strings.Contains(out, "<!") {
			t.Errorf("special mention in mrkdwn %q (from %q)", out, md)
		}
		if limit := maxMrkdwnGrowth*len(md) + 64; len(out) > limit {
			t.Errorf("%d bytes of Markdown gave %d bytes of mrkdwn; want at most %d", len(md), len(out), limit)
		}
	})
}
