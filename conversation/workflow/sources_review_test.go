package workflow_test

import (
	"reflect"
	"strings"
	"testing"
)

// TestParse_FetchWithEnhance: no model writes a fetch artifact, so there is no text
// of the model's to enhance: enhance is refused like editor (else the card would say
// "Enhanced by the model profile" of pages no model saw).
func TestParse_FetchWithEnhance(t *testing.T) {
	got := problems(t, yaml(sourcesBase+`	- id: sources
		title: Sources
		mode: auto
		depends_on: [research]
		fetch: research
		enhance: {model: enhance, prompt: Sharpen.}
`))
	want := []string{`test.yaml:16: artifact "sources": enhance does not apply to a fetch artifact: no model writes it (remove enhance or fetch)`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
