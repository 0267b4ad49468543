package postgres

import (
	"database/sql/driver"
	"errors"
	"io"
	"net"
	"syscall"

	"github.com/lib/pq"
	"github.com/lib/pq/pqerror"

	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// classify returns err marked with conversation.ErrUnavailable when it may go away
// when retried (transient); every method of the store returns its errors through it.
func classify(err error) error { return sqlstore.Unavailable(err, transient) }

// transient reports whether err may go away when the statement is retried, on a new
// connection if need be:
//
//   - the connection failed or was lost: a net.Error (refused, reset, timed out, a
//     name that does not resolve yet), io.EOF or io.ErrUnexpectedEOF (the server
//     closed it), ECONNREFUSED or ECONNRESET, or driver.ErrBadConn;
//   - PostgreSQL's SQLSTATE class 08 (connection exception) or 53 (insufficient
//     resources: 53300 too_many_connections, out of memory or disk), or 57P01
//     admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now (the server is
//     stopping, restarting or starting);
//   - 40001 serialization_failure and 40P01 deadlock_detected: the transaction was
//     rolled back, and running it again may succeed.
//
// Other server errors (a constraint, a syntax error, 57014 query_canceled) are not.
func transient(err error) bool {
	var pe *pq.Error
	if errors.As(err, &pe) {
		switch pe.Code.Class() {
		case pqerror.ClassConnectionException, pqerror.ClassInsufficientResources:
			return true
		}
		switch pe.Code {
		case pqerror.AdminShutdown, pqerror.CrashShutdown, pqerror.CannotConnectNow,
			pqerror.TRSerializationFailure, pqerror.TRDeadlockDetected:
			return true
		}
		return false
	}
	var ne net.Error
	return errors.As(err, &ne) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, driver.ErrBadConn)
}
