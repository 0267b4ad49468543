package textcut_test

import (
	"fmt"
	"unicode"

	"github.com/threadwright/threadwright/internal/textcut"
)

func ExampleEllipsis() {
	fmt.Println(textcut.Ellipsis("Approve the draft", 20, nil))
	fmt.Println(textcut.Ellipsis("Approve the draft", 9, nil))
	fmt.Println(textcut.Ellipsis("Approve the draft", 9, unicode.IsSpace))
	// Output:
	// Approve the draft
	// Approve …
	// Approve…
}

func ExampleAtBreak() {
	fmt.Println(textcut.AtBreak("The first line.\nThe second line.", 19, 200, "\n "))
	// Output:
	// The first line.
}

func ExampleNoted() {
	note := func(kept, total int) string {
		return fmt.Sprintf(" [the first %d of %d characters]", kept, total)
	}
	fmt.Println(textcut.Noted("привет, мир", 6, note))
	// Output:
	// привет [the first 6 of 11 characters]
}
