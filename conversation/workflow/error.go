package workflow

import (
	"fmt"
	"strings"
)

// Problem is one thing wrong with a workflow file.
type Problem struct {
	// File is the Definition.Source of the file ("builtin:proposal.yaml" or a path).
	File string
	// Line is the 1-based line in File the problem is about; 0 when it is about the
	// file as a whole (a file that cannot be read, a Definition built in Go).
	Line int
	// Reason says what is wrong, in words a workflow author can act on.
	Reason string
}

// String formats p as "file:line: reason" ("file: reason" when Line is 0), the form
// editors and CI logs link to a location.
func (p Problem) String() string {
	if p.Line <= 0 {
		return fmt.Sprintf("%s: %s", p.File, p.Reason)
	}
	return fmt.Sprintf("%s:%d: %s", p.File, p.Line, p.Reason)
}

// Error lists every problem found in one or more workflow files. Parse, Load,
// NewSet and Definition.Validate return it (as error; use errors.As to read it).
type Error struct {
	Problems []Problem
}

// Error returns the problems, one "file:line: reason" per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// problems collects the problems of one file.
type problems struct {
	file string
	list []Problem
}

func (ps *problems) addf(line int, format string, args ...any) {
	ps.list = append(ps.list, Problem{File: ps.file, Line: line, Reason: fmt.Sprintf(format, args...)})
}

// err returns the collected problems as an *Error, or nil when there are none.
func (ps *problems) err() error {
	if len(ps.list) == 0 {
		return nil
	}
	return &Error{Problems: ps.list}
}
