package redact

import (
	"cmp"
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
// are left out; each value is also scrubbed in its URL-escaped forms (query and path),
// as it appears in a URL or a form body.
func New(secrets ...string) *Redactor {
	seen := map[string]bool{}
	var all []string
	for _, s := range secrets {
		if len(s) < MinLength {
			continue
		}
		for _, v := range []string{s, url.QueryEscape(s), url.PathEscape(s)} {
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
