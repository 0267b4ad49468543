package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"regexp"
	"strings"

	"github.com/kelseyhightower/envconfig"
)

// envCheck is one check of a configuration variable: when ok is false, the error is
// "<name>: expected <want>".
type envCheck struct {
	ok   bool
	name string
	want string
}

// envError returns the error of the first check of checks that is not ok, or nil.
func envError(checks []envCheck) error {
	for _, ch := range checks {
		if !ch.ok {
			return fmt.Errorf("%s: expected %s", ch.name, ch.want)
		}
	}
	return nil
}

// configError turns envconfig's parse error into one line naming the variable.
func configError(err error) error {
	var pe *envconfig.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: expected %s, got %q", pe.KeyName, typeWord(pe.TypeName), pe.Value)
	}
	return err
}

// typeWord names the values of a Go type, for a parse error.
func typeWord(t string) string {
	switch t {
	case "int", "int64":
		return "a whole number"
	case "time.Duration", "Duration":
		return "a duration such as 30s or 5m"
	case "bool":
		return "true or false"
	case "float64":
		return "a number"
	}
	return "a " + t
}

// isHTTPURL reports whether s is an absolute http(s) URL with a host.
func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// validAddr reports whether s is host:port (either may be empty).
func validAddr(s string) bool {
	_, _, err := net.SplitHostPort(s)
	return err == nil
}

// validLevel reports whether s names a slog level (debug, info, warn, error).
func validLevel(s string) bool {
	var l slog.Level
	return l.UnmarshalText([]byte(s)) == nil
}

// compileAll compiles case-insensitive regular expressions.
func compileAll(pats []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range pats {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		re, err := regexp.Compile("(?i)" + p)
		if err != nil {
			return nil, err
		}
		out = append(out, re)
	}
	return out, nil
}

// validUserIDs reports whether every id looks like a Slack user id (U… or W…, upper
// case letters and digits).
func validUserIDs(ids []string) bool {
	for _, id := range ids {
		if len(id) < 2 || (id[0] != 'U' && id[0] != 'W') || strings.ToUpper(id) != id || strings.ContainsAny(id, " <@>") {
			return false
		}
	}
	return true
}
