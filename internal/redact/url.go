package redact

import (
	"net/url"
	"strings"
)

// URL returns raw fit for a log line: its user information (a user name can be a
// token too) and the value of every query parameter replaced by Mask, the rest as
// it was. A raw that does not parse as a URL is Mask whole: a secret may be
// anywhere in it.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return Mask
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k, vs := range q {
			for i := range vs {
				vs[i] = "REDACTED"
			}
			q[k] = vs
		}
		u.RawQuery = q.Encode()
	}
	u.Fragment, u.RawFragment = "", ""
	return strings.ReplaceAll(u.String(), "REDACTED", Mask)
}
