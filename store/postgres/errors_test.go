package postgres

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"github.com/lib/pq"

	"github.com/threadwright/threadwright/conversation"
)

func TestTransient(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused", &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, true},
		{"reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"timeout", &net.OpError{Op: "read", Net: "tcp", Err: os.ErrDeadlineExceeded}, true},
		{"no such host", &net.DNSError{Err: "no such host", Name: "db", IsNotFound: true}, true},
		{"EOF", io.EOF, true},
		{"unexpected EOF", fmt.Errorf("pq: %w", io.ErrUnexpectedEOF), true},
		{"bad conn", driver.ErrBadConn, true},
		{"08006 connection failure", &pq.Error{Code: "08006"}, true},
		{"08001 cannot connect", &pq.Error{Code: "08001"}, true},
		{"53300 too many connections", &pq.Error{Code: "53300"}, true},
		{"53100 disk full", &pq.Error{Code: "53100"}, true},
		{"57P01 admin shutdown", &pq.Error{Code: "57P01"}, true},
		{"57P02 crash shutdown", &pq.Error{Code: "57P02"}, true},
		{"57P03 cannot connect now", &pq.Error{Code: "57P03"}, true},
		{"40001 serialization failure", fmt.Errorf("save: %w", &pq.Error{Code: "40001"}), true},
		{"40P01 deadlock", &pq.Error{Code: "40P01"}, true},
		{"57014 query canceled", &pq.Error{Code: "57014"}, false},
		{"23505 unique violation", &pq.Error{Code: "23505"}, false},
		{"42601 syntax error", &pq.Error{Code: "42601"}, false},
		{"22021 bad encoding", &pq.Error{Code: "22021"}, false},
		{"not found", conversation.ErrNotFound, false},
		{"other", errors.New("boom"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := transient(tc.err); got != tc.want {
				t.Errorf("transient(%v) = %v; want %v", tc.err, got, tc.want)
			}
			err := classify(fmt.Errorf("load conversation T/C/1: %w", tc.err))
			if errors.Is(err, conversation.ErrUnavailable) != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("classify(%v) = %v; want ErrUnavailable %v, the cause kept", tc.err, err, tc.want)
			}
		})
	}
	// The context's errors are the caller's, even when the driver's error says more.
	err := classify(fmt.Errorf("%w: %w", context.Canceled, driver.ErrBadConn))
	if errors.Is(err, conversation.ErrUnavailable) {
		t.Errorf("classify of a cancellation = %v; want it not unavailable", err)
	}
}

// TestOpenUnreachable checks that a server nobody listens for is an error that may go
// away when retried (the server may be starting).
func TestOpenUnreachable(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nobody listens there any more
	_, err = Open(context.Background(), "postgres://u:secret@"+addr+"/db?sslmode=disable&connect_timeout=5", 2)
	if !errors.Is(err, conversation.ErrUnavailable) {
		t.Errorf("Open of an address nobody listens on: %v; want ErrUnavailable", err)
	}
}

func TestCloseErr(t *testing.T) {
	lost := &net.OpError{Op: "write", Net: "tcp", Err: syscall.EPIPE}
	for _, tc := range []struct {
		name string
		err  error
		kept bool
	}{
		{"nil", nil, false},
		{"broken pipe", lost, false},
		{"wrapped reset", fmt.Errorf("close: %w", syscall.ECONNRESET), false},
		{"server error", &pq.Error{Code: "57P01"}, true},
		{"other", errors.New("boom"), true},
	} {
		if got := closeErr(tc.err); (got != nil) != tc.kept {
			t.Errorf("%s: closeErr(%v) = %v; kept %v wanted", tc.name, tc.err, got, tc.kept)
		}
	}
}
