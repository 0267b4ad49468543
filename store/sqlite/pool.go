package sqlite

import (
	"database/sql"

	"github.com/jmoiron/sqlx"
)

// pool is what the parts of a Store share: its connections, and the statements
// prepared on them.
type pool struct {
	// write is the only connection that writes; read is a pool of query-only connections.
	write *sqlx.DB
	read  *sqlx.DB
	// The statements of a turn and of the heartbeat, prepared once (on the write
	// connection, or on each read connection as it is first used) rather than parsed
	// on every call; a transaction on the write connection reuses them
	// (sql.Tx.StmtContext finds them prepared on its connection).
	st statements
}

// statements are the Store's prepared statements; their SQL is in the constants named
// after them (createSQL, acquireSQL, …), next to the methods that run them.
type statements struct {
	// On read.
	loadConversation, loadMessages *sql.Stmt
	// On write.
	create, update, insertMessage, markDone, leaseHeld *sql.Stmt
	enqueueInput, enqueueLease                         *sql.Stmt
	acquire, begin, release, renew                     *sql.Stmt
}
