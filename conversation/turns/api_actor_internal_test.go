package turns

import "testing"

func TestAPIActors(t *testing.T) {
	for in, want := range map[string]string{
		"Approved by <@api:ci-bot>.":       "Approved by ci-bot (via API).",
		"Утверждено: <@api:ci-bot>.":       "Утверждено: ci-bot (через API).",
		"Approved by <@U0ALICE>.":          "Approved by <@U0ALICE>.",
		"<@api:a.b_c> and <@api:portal-2>": "a.b_c (via API) and portal-2 (via API)",
	} {
		if got := apiActors(in); got != want {
			t.Errorf("apiActors(%q) = %q, want %q", in, got, want)
		}
	}
}
