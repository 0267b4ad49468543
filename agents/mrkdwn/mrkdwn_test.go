package mrkdwn_test

import (
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents/mrkdwn"
)

func TestFromMarkdown(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"Plain", "Just text.", "Just text."},
		{"Bold", "**Bold** and __also bold__", "*Bold* and *also bold*"},
		{"Italic", "*italic* and _italic_", "_italic_ and _italic_"},
		{"BoldItalic", "***both***", "*_both_*"},
		{"ItalicInsideBold", "**bold *and italic* text**", "*bold _and italic_ text*"},
		{"Strike", "~~gone~~", "~gone~"},
		{"NotEmphasis", "snake_case_name, 2*3*4 and a * b * c", "snake_case_name, 2*3*4 and a * b * c"},
		{"Escape", "A & B <tag> 3 > 2", "A &amp; B &lt;tag&gt; 3 &gt; 2"},
		{"Link", "See [the docs](https://example.com/a?x=1&y=2).", "See <https://example.com/a?x=1&amp;y=2|the docs>."},
		{"LinkWithParens", "[Go](https://en.wikipedia.org/wiki/Go_(programming_language))", "<https://en.wikipedia.org/wiki/Go_(programming_language)|Go>"},
		{"LinkWithTitle", `[x](https://e.com "Title")`, "<https://e.com|x>"},
		{"LinkLabelFormatting", "[**bold** & co](https://e.com)", "<https://e.com|*bold* &amp; co>"},
		{"LinkSameAsURL", "[https://e.com](https://e.com)", "<https://e.com>"},
		{"LinkPipe", "[a](https://e.com/a|b)", "<https://e.com/a%7Cb|a>"},
		{"Image", "![diagram](https://x.io/i.png)", "<https://x.io/i.png|diagram>"},
		{"RelativeLink", "[readme](docs/readme.md)", "readme"},
		{"Autolink", "<https://auto.link/x>", "<https://auto.link/x>"},
		{"SlackLink", "<https://x.com|X & Y>", "<https://x.com|X &amp; Y>"},
		{"BareURL", "Go to https://example.com/a_b_c?x=1&y=2.", "Go to https://example.com/a_b_c?x=1&amp;y=2."},
		{"Mentions", "Ask <@U123ABC> in <#C0123|general>", "Ask <@U123ABC> in <#C0123|general>"},
		{"BroadcastsEscaped", "<!channel> <!here> <!everyone>", "&lt;!channel&gt; &lt;!here&gt; &lt;!everyone&gt;"},
		{"CodeSpan", "Run `a < b && **c**` now", "Run `a &lt; b &amp;&amp; **c**` now"},
		{"CodeSpanDoubleTicks", "``x`y`` and ``plain``", "``x`y`` and `plain`"},
		{"BoldAroundCode", "**run `go test`**", "*run `go test`*"},
		{"UnclosedBacktick", "a ` b *c*", "a ` b _c_"},
		{"Headings", "# Title\n### **Sub** title ###\ntext", "*Title*\n*Sub title*\ntext"},
		{"Bullets", "- one\n  - nested *it*\n* two\n+ three\n*   spaced", "• one\n    ◦ nested _it_\n• two\n• three\n• spaced"},
		{"Ordered", "1. first\n2) **second**", "1. first\n2) *second*"},
		{"Tasks", "- [ ] todo\n- [x] done", "☐ todo\n☑ done"},
		{"Quote", "> quoted **bold**\n>> nested", "> quoted *bold*\n> nested"},
		{"Rule", "a\n\n---\n\nb", "a\n\n──────────\n\nb"},
		{"Break", "line<br>next", "line\nnext"},
		{"FencedCode", "```go\nif a < b && **c** {\n\t_x_\n}\n```\nafter **b**", "```\nif a &lt; b &amp;&amp; **c** {\n\t_x_\n}\n```\nafter *b*"},
		{"FencedTildes", "~~~\n# not a heading\n~~~", "```\n# not a heading\n```"},
		{"FencedIndented", "1. Run:\n   ```sh\n   go test ./...\n   ```", "1. Run:\n```\ngo test ./...\n```"},
		{"FencedUnclosed", "```\ncode <x>", "```\ncode &lt;x&gt;\n```"},
		{"Table", "| Name | Age |\n|---|---:|\n| **Alice** | 30 |\n| Bob<br>Jr | 4 |\n\nafter", "```\nName   | Age\n-------+----\nAlice  | 30\nBob Jr | 4\n```\n\nafter"},
		{"TableEscapes", "| a | b |\n| - | - |\n| x \\| y | <z> |", "```\na     | b\n------+----\nx | y | &lt;z&gt;\n```"},
		{"CRLF", "**a**\r\nb", "*a*\nb"},
		{"ForgedPlaceholder", "x \uE0000\uE001 y", "x 0 y"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mrkdwn.FromMarkdown(tt.in); got != tt.want {
				t.Errorf("FromMarkdown(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestEscape(t *testing.T) {
	if got := mrkdwn.Escape("<a & b>"); got != "&lt;a &amp; b&gt;" {
		t.Errorf("got %q", got)
	}
}

func BenchmarkFromMarkdown(b *testing.B) {
	md := strings.Repeat("## Results\n\nThe **answer** is in [the docs](https://example.com/a?b=1&c=2), see `code < 3`.\n- one *item*\n- two ~~items~~\n\n```go\nfmt.Println(\"<hi>\")\n```\n", 10)
	b.ReportAllocs()
	for b.Loop() {
		mrkdwn.FromMarkdown(md)
	}
}
