package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

func TestUnavailable(t *testing.T) {
	errEOF := fmt.Errorf("load conversation T/C/1: %w", io.EOF)
	transient := func(err error) bool { return errors.Is(err, io.EOF) }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"transient", errEOF, true},
		{"other", errors.New("syntax error"), false},
		{"canceled", fmt.Errorf("%w and %w", context.Canceled, io.EOF), false},
		{"deadline", fmt.Errorf("%w and %w", context.DeadlineExceeded, io.EOF), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sqlstore.Unavailable(tc.err, transient)
			if errors.Is(got, conversation.ErrUnavailable) != tc.want {
				t.Errorf("Unavailable(%v) is ErrUnavailable: %v; want %v", tc.err, !tc.want, tc.want)
			}
			if !errors.Is(got, tc.err) || got.Error() != tc.err.Error() {
				t.Errorf("Unavailable(%v) = %v; want the error kept in the chain, its message unchanged", tc.err, got)
			}
		})
	}
	if err := sqlstore.Unavailable(nil, transient); err != nil {
		t.Errorf("Unavailable(nil) = %v", err)
	}
	marked := sqlstore.Unavailable(errEOF, transient)
	if again := sqlstore.Unavailable(marked, transient); again != marked {
		t.Errorf("Unavailable of a marked error wrapped it again: %#v", again)
	}
	// A marked error keeps its mark when wrapped further.
	if err := fmt.Errorf("save: %w", marked); !errors.Is(err, conversation.ErrUnavailable) || !errors.Is(err, io.EOF) {
		t.Errorf("wrapped: %v lost its mark or cause", err)
	}
}
