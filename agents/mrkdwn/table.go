package mrkdwn

import (
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/threadwright/threadwright/internal/textcut"
)

var (
	// tableSeparator is a table's second row, "|---|:--:|".
	tableSeparator = regexp.MustCompile(`^\s*\|?\s*:?-{1,}:?\s*(\|\s*:?-{1,}:?\s*)*\|?\s*$`)
	// htmlBreak is the <br> models write for a line break in a table cell (or a line).
	htmlBreak = regexp.MustCompile(`(?i)<br\s*/?>`)
	// cellMarks are the emphasis and code marks a cell's text drops: a table is shown
	// as code, where they would be shown as they are.
	cellMarks = strings.NewReplacer("**", "", "__", "", "`", "")
)

func isTableRow(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "|") && strings.Count(t, "|") >= 2
}

// Table bounds: a rendered table row has at most MaxTableColumns columns (a last
// column of … stands for the rest), each at most MaxCellChars characters wide, and the
// row at most MaxTableWidth characters; a cell cut short ends with …. Every row is
// padded to its columns' widths, so without them one wide cell made every row of its
// table as wide (docs/operations.md, "Reply bounds").
const (
	MaxTableColumns = 12
	MaxCellChars    = 40
	MaxTableWidth   = 120
)

// minColumnChars is the least width a column is narrowed to for MaxTableWidth.
const minColumnChars = 3

// renderTable renders Markdown table rows as an aligned code block within the table
// bounds; the separator row becomes a line of dashes.
func renderTable(rows []string) []string {
	var cells [][]string
	sep := -1
	for i, row := range rows {
		if tableSeparator.MatchString(row) && i > 0 && sep < 0 {
			sep = i
			cells = append(cells, nil)
			continue
		}
		t := strings.TrimSpace(row)
		t = strings.TrimPrefix(t, "|")
		t = strings.TrimSuffix(t, "|")
		var r []string
		for j, c := range splitCells(t) {
			if j == MaxTableColumns {
				r = append(r, "…")
				break
			}
			c = htmlBreak.ReplaceAllString(c, " ")
			c = cellMarks.Replace(strings.TrimSpace(c))
			r = append(r, textcut.Ellipsis(c, MaxCellChars, textcut.Cutset(" ")))
		}
		cells = append(cells, r)
	}
	widths := columnWidths(cells)
	out := []string{"```"}
	var b strings.Builder
	for _, r := range cells {
		b.Reset()
		if r == nil { // the separator
			for j, w := range widths {
				if j > 0 {
					b.WriteString("-+-")
				}
				b.WriteString(strings.Repeat("-", w))
			}
			out = append(out, b.String())
			continue
		}
		for j, w := range widths {
			c := ""
			if j < len(r) {
				c = textcut.Ellipsis(r[j], w, textcut.Cutset(" "))
			}
			if j > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(c)
			b.WriteString(strings.Repeat(" ", w-utf8.RuneCountInString(c)))
		}
		out = append(out, Escape(strings.TrimRight(b.String(), " ")))
	}
	return append(out, "```")
}

// columnWidths returns the width of each column of cells: its widest cell, the
// widest columns narrowed to one width so that a row, with its " | " separators, is
// at most MaxTableWidth characters.
func columnWidths(cells [][]string) []int {
	var widths []int
	for _, r := range cells {
		for j, c := range r {
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
	}
	room := MaxTableWidth - 3*(len(widths)-1)
	rowWidth := func(limit int) int {
		n := 0
		for _, w := range widths {
			n += min(w, limit)
		}
		return n
	}
	if rowWidth(MaxCellChars) <= room {
		return widths
	}
	limit := MaxCellChars
	for limit > minColumnChars && rowWidth(limit) > room {
		limit--
	}
	for j, w := range widths {
		widths[j] = min(w, limit)
	}
	return widths
}

// splitCells splits a table row on the | that are not escaped as \|.
func splitCells(row string) []string {
	var cells []string
	var b strings.Builder
	for i := 0; i < len(row); i++ {
		switch {
		case row[i] == '\\' && i+1 < len(row) && row[i+1] == '|':
			b.WriteByte('|')
			i++
		case row[i] == '|':
			cells = append(cells, b.String())
			b.Reset()
		default:
			b.WriteByte(row[i])
		}
	}
	return append(cells, b.String())
}
