package metrics

import "testing"

func TestIsJSON(t *testing.T) {
	for ct, want := range map[string]bool{
		"application/json":                 true,
		"application/json; charset=utf-8":  true,
		" Application/JSON ;charset=UTF-8": true,
		"text/html; charset=utf-8":         false,
		"application/jsonx":                false,
		"":                                 false,
	} {
		if got := isJSON(ct); got != want {
			t.Errorf("isJSON(%q) = %v, want %v", ct, got, want)
		}
	}
}
