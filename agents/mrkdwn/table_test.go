package mrkdwn_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/threadwright/threadwright/agents/mrkdwn"
)

// wideTableAnswer returns an answer of about size bytes shaped like the one that
// became 2 MB of mrkdwn: a table of short rows with one very wide cell, the wide
// cell in the first column so every row is padded to it, then many columns in a
// second table.
func wideTableAnswer(size int) string {
	var b strings.Builder
	b.WriteString("Here is the comparison you asked for.\n\n| Item | Note |\n|---|---|\n")
	fmt.Fprintf(&b, "| %s | wide |\n", strings.Repeat("long description ", 180))
	for i := 0; b.Len() < size*2/3; i++ {
		fmt.Fprintf(&b, "| %d | ok |\n", i)
	}
	b.WriteString("\nAnd per region:\n\n|")
	for c := 0; c < 60; c++ {
		fmt.Fprintf(&b, " r%d |", c)
	}
	b.WriteString("\n|" + strings.Repeat("---|", 60) + "\n")
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "| %d |%s\n", i, strings.Repeat(" |", 59))
	}
	return b.String()
}

func TestFromMarkdownTableBounded(t *testing.T) {
	in := wideTableAnswer(9 << 10)
	out := mrkdwn.FromMarkdown(in)
	if len(out) > 2*len(in) {
		t.Fatalf("%d bytes of Markdown became %d bytes of mrkdwn; want at most %d", len(in), len(out), 2*len(in))
	}
	for _, line := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(line); n > mrkdwn.MaxTableWidth {
			t.Fatalf("table row of %d characters, want at most %d: %.80q", n, mrkdwn.MaxTableWidth, line)
		}
	}
	if !strings.Contains(out, "long description long description long… | wide") {
		t.Errorf("the wide cell is not cut with …:\n%.400s", out)
	}
}

func TestFromMarkdownTableCaps(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"WideCell", "| a | b |\n|---|---|\n| " + strings.Repeat("x", 50) + " | y |",
			"```\na" + strings.Repeat(" ", mrkdwn.MaxCellChars-1) + " | b\n" + strings.Repeat("-", mrkdwn.MaxCellChars) + "-+--\n" +
				strings.Repeat("x", mrkdwn.MaxCellChars-1) + "… | y\n```"},
		{"ManyColumns", "|" + strings.Repeat(" c |", mrkdwn.MaxTableColumns+3) + "\n|" + strings.Repeat("-|", mrkdwn.MaxTableColumns+3) + "\n|" + strings.Repeat(" 1 |", mrkdwn.MaxTableColumns+3),
			"```\n" + strings.Repeat("c | ", mrkdwn.MaxTableColumns) + "…\n" + strings.Repeat("--+-", mrkdwn.MaxTableColumns) + "-\n" + strings.Repeat("1 | ", mrkdwn.MaxTableColumns) + "…\n```"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mrkdwn.FromMarkdown(tt.in); got != tt.want {
				t.Errorf("got\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	t.Run("RowWidth", func(t *testing.T) {
		row := "|" + strings.Repeat(" "+strings.Repeat("w", 30)+" |", mrkdwn.MaxTableColumns)
		in := row + "\n|" + strings.Repeat("-|", mrkdwn.MaxTableColumns) + "\n" + row
		for _, line := range strings.Split(mrkdwn.FromMarkdown(in), "\n") {
			if n := utf8.RuneCountInString(line); n > mrkdwn.MaxTableWidth {
				t.Errorf("row of %d characters: %s", n, line)
			}
		}
	})
}

func BenchmarkFromMarkdownWideTable(b *testing.B) {
	in := wideTableAnswer(9 << 10)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	var out string
	for b.Loop() {
		out = mrkdwn.FromMarkdown(in)
	}
	b.ReportMetric(float64(len(out)), "out-bytes")
}
