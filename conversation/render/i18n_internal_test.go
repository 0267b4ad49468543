package render

import (
	"strings"
	"testing"
)

// TestCatalogsComplete: every catalog has every English key, with the same number of
// format verbs, so no language silently falls back to English or misprints.
func TestCatalogsComplete(t *testing.T) {
	for lang, c := range catalogs {
		for key, en := range catalogs["en"] {
			got, ok := c[key]
			if !ok {
				t.Errorf("%s lacks %q", lang, key)
				continue
			}
			if verbs(got) != verbs(en) {
				t.Errorf("%s %q has %d format verbs; English has %d", lang, key, verbs(got), verbs(en))
			}
		}
	}
	for lang := range statusWords {
		for s := range statusWords["en"] {
			if statusWords[lang][s] == "" {
				t.Errorf("%s lacks the status word of %q", lang, s)
			}
		}
	}
}

func verbs(s string) int { return strings.Count(s, "%") - 2*strings.Count(s, "%%") }
