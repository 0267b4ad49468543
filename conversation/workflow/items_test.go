package workflow_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation/workflow"
)

func TestItems(t *testing.T) {
	type item = workflow.Item
	tests := []struct {
		name string
		text string
		want []item
	}{
		{"TitleAndSections", "# Why Go\n\nAn intro nobody fans out over.\n\n## The compiler\nFast builds.\n\n### Details\nMore.\n\n## The runtime ##\nGC and goroutines.\n", []item{
			{"The compiler", "Fast builds.\n\n### Details\nMore."},
			{"The runtime", "GC and goroutines."},
		}},
		{"ShallowestRepeatedLevel", "## A\na\n# Part one\n### x\n### y\n# Part two\nz\n", []item{
			{"Part one", "### x\n### y"},
			{"Part two", "z"},
		}},
		{"ShallowerHeadingEndsItem", "## A\na\n## B\nb\n# Appendix\nignored\n", []item{
			{"A", "a"},
			{"B", "b"},
		}},
		{"SingleHeadingThenList", "## Outline\n\nThe plan:\n\n1. Intro\n   Why it matters.\n2. Method\n   - step one\n   - step two\n\nClosing words.\n", []item{
			{"Intro", "Why it matters."},
			{"Method", "- step one\n- step two"},
		}},
		{"FencedCode", "# Setup\n\n```sh\n# install\ngo install ./...\n# run\n```\n\n~~~\n# not a heading\n~~~\n\n1. Install\n2. Run\n", []item{
			{"Install", ""},
			{"Run", ""},
		}},
		{"FencedCodeInsideSection", "## One\n```\n## not a heading\n```\n## Two\ntext\n", []item{
			{"One", "```\n## not a heading\n```"},
			{"Two", "text"},
		}},
		{"ParenNumbers", "Steps:\n1) Plan the work\n2) Do it:\nand lazily continue\n10) Check\n", []item{
			{"Plan the work", ""},
			{"Do it", "and lazily continue"},
			{"Check", ""},
		}},
		{"BoldTitles", "1. **Intro** — why readers care.\n   Two sentences.\n2. **Method:**\n   How.\n3. **Risks**: what may fail\n", []item{
			{"Intro", "why readers care.\nTwo sentences."},
			{"Method", "How."},
			{"Risks", "what may fail"},
		}},
		{"BoldHeadings", "## **Intro:**\nx\n## Results:\ny\n", []item{
			{"Intro", "x"},
			{"Results", "y"},
		}},
		{"Cyrillic", "# Статья\n\n## Введение:\nЗачем это читать.\n\n## Основная часть\nФакты и цифры.\n", []item{
			{"Введение", "Зачем это читать."},
			{"Основная часть", "Факты и цифры."},
		}},
		{"CyrillicList", "План:\n1. **Введение** — зачем\n2. Выводы\n", []item{
			{"Введение", "зачем"},
			{"Выводы", ""},
		}},
		{"CRLF", "## A\r\na\r\n## B\r\nb\r\n", []item{
			{"A", "a"},
			{"B", "b"},
		}},
		{"IndentedNumbersAreNotTopLevel", "- a\n  1. nested\n  2. nested\n", nil},
		{"NotHeadings", "#hashtag\n#hashtag\n    # indented code\n    # indented code\n##\n##\n", nil},
		{"SingleItemList", "1. Only one\n", []item{{"Only one", ""}}},
		{"Nothing", "Just a paragraph.\n\nAnd another, with 1.5 million and 2020.\n", nil},
		{"Empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := workflow.Items(tt.text)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Items(%q)\n got %q\nwant %q", tt.text, got, tt.want)
			}
		})
	}
}

// outline is a ~10 KB outline: a title, then sections with prose, lists and code.
func outline() string {
	var b strings.Builder
	b.WriteString("# A long article\n\nWhat this article is about, in a paragraph.\n\n")
	for i := 0; b.Len() < 10_000; i++ {
		fmt.Fprintf(&b, "## Section %d: a heading\n\n", i+1)
		b.WriteString("What this section covers, in a sentence or two, with **bold** and a [link](https://example.com).\n\n")
		b.WriteString("- a point\n- another point\n\n```go\n# not a heading\nfmt.Println(\"x\")\n```\n\n")
		b.WriteString("### A subsection\n\nMore prose that goes on for a while, so the section is not trivially short.\n\n")
	}
	return b.String()
}

func BenchmarkItems(b *testing.B) {
	text := outline()
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		workflow.Items(text)
	}
}
