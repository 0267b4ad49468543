package redact_test

import (
	"testing"

	"github.com/threadwright/threadwright/internal/redact"
)

// TestRedactorEscapedForms: a secret is found as other programs write it, not only as
// Go's url.QueryEscape and url.PathEscape do: in a URL's user information (a DSN, as
// net/url writes a password), and in a JSON string, as a server echoes a header back
// in an error body (Go escapes & < >; PHP and Python's ujson also write / as \/).
func TestRedactorEscapedForms(t *testing.T) {
	const (
		password = "p@ss/w rd!x"                  // a database password
		bearer   = "ab/cd+ef==gh&ij<kl>"          // a base64-like header token
		quoted   = `say "hi" \ then-go-on-longer` // quotes and a backslash
	)
	r := redact.New(password, bearer, quoted)
	for _, in := range []string{
		"postgres://u:p%40ss%2Fw%20rd%21x@db/x",                    // url.UserPassword
		`{"error":"bad token ab\/cd+ef==gh&ij<kl>"}`,               // / escaped
		`{"error":"bad token ab/cd+ef==gh\u0026ij\u003ckl\u003e"}`, // Go's json.Marshal
		`{"error":"bad token ab\/cd+ef==gh\u0026ij\u003ckl\u003e"}`,
		`{"error":"bad key say \"hi\" \\ then-go-on-longer"}`,
	} {
		if got := r.String(in); r.Contains(got) || got == in {
			t.Errorf("String(%q) = %q; want the secret masked", in, got)
		}
	}
}
