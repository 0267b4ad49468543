package render

import (
	"testing"
	"unicode/utf8"
)

func TestModalTitle(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Problem", "Problem"},
		{"Value proposition", "Value proposition"},
		{"Exactly twenty-four char", "Exactly twenty-four char"},
		{"Methodology and work plan for the pilot", "Methodology and work…"},
		{"Предложение ценности для клиентов", "Предложение ценности…"},
		{"Supercalifragilisticexpialidocious", "Supercalifragilisticexp…"},
		{"  Budget \n and   timeline ", "Budget and timeline"},
	} {
		got := modalTitle(tc.in)
		if got != tc.want || utf8.RuneCountInString(got) > maxModalTitle {
			t.Errorf("modalTitle(%q) = %q, want %q (at most %d characters)", tc.in, got, tc.want, maxModalTitle)
		}
	}
}
