package redact

import (
	"cmp"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
)

// Mask replaces a secret value in scrubbed text.
const Mask = "[REDACTED]"

// MinLength is the shortest value a Redactor scrubs, in bytes; shorter values are
// ignored (see the package documentation).
const MinLength = 8

// Redactor replaces secret values in text. The zero value and nil scrub nothing. It is
// immutable and safe for concurrent use.
type Redactor struct {
	r       *strings.Replacer
	secrets []string
}

// New returns a Redactor of secrets: empty values and values shorter than MinLength
// are left out; each value is also scrubbed in its escaped forms (see forms), as it
// appears in a URL, a form body or a JSON string.
func New(secrets ...string) *Redactor {
	seen := map[string]bool{}
	var all []string
	for _, s := range secrets {
		if len(s) < MinLength {
			continue
		}
		for _, v := range forms(s) {
			if !seen[v] {
				seen[v] = true
				all = append(all, v)
			}
		}
	}
	if len(all) == 0 {
		return &Redactor{}
	}
	// Longest first: strings.Replacer tries the old strings in argument order at
	// each position, so a secret that contains another is masked whole.
	slices.SortFunc(all, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(all))
	for _, v := range all {
		pairs = append(pairs, v, Mask)
	}
	return &Redactor{r: strings.NewReplacer(pairs...), secrets: all}
}

// forms returns s as written and as escaped: in a URL's query, path and user
// information (net/url), and inside a JSON string, with and without the escaping
// of &, < and > that Go applies, each also with / written as \/ (as PHP and some
// other encoders write it).
func forms(s string) []string {
	all := []string{s, url.QueryEscape(s), url.PathEscape(s), strings.TrimPrefix(url.UserPassword("", s).String(), ":")}
	for _, html := range []bool{true, false} {
		var b strings.Builder
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(html)
		_ = e.Encode(s) // a string: cannot fail
		j := strings.TrimSuffix(b.String(), "\n")
		j = j[1 : len(j)-1] // the quotes
		all = append(all, j, strings.ReplaceAll(j, "/", `\/`))
	}
	return all
}

// String returns s with every secret replaced by Mask.
func (r *Redactor) String(s string) string {
	if r == nil || r.r == nil || s == "" {
		return s
	}
	return r.r.Replace(s)
}

// Contains reports whether s holds a secret.
func (r *Redactor) Contains(s string) bool {
	if r == nil {
		return false
	}
	for _, v := range r.secrets {
		if strings.Contains(s, v) {
			return true
		}
	}
	return false
}

// Len returns the number of values scrubbed (escaped forms included).
func (r *Redactor) Len() int {
	if r == nil {
		return 0
	}
	return len(r.secrets)
}
