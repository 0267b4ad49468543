package doclinks_test

import (
	"os"
	"testing"

	"github.com/threadwright/threadwright/internal/doclinks"
)

// TestRepository fails at every pointer of the repository's comments and documents
// that leads nowhere (see the package's doc for what counts as a pointer).
func TestRepository(t *testing.T) {
	problems, err := doclinks.Check(os.DirFS("../.."))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	if len(problems) > 0 {
		t.Logf(`%d pointers lead nowhere. Point at a section as docs/<page>.md, "<Heading>", at a whole file by its path from the repository's root, and link a Markdown section as [text](<page>.md#<anchor>).`, len(problems))
	}
}
