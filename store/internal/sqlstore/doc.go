// Package sqlstore is what store/sqlite and store/postgres share of a conversation.Store
// on SQL: the Go side of their tables, which have the same columns in both schemas, and
// what their methods do around the SQL, which is the same in both backends.
//
//   - Row types and their conversions: ConversationRow, InputRow, WorkflowRow, LeaseRow
//     and KeyRow (to conversation.Conversation, conversation.Input,
//     conversation.WorkflowRef, conversation.LeaseState and conversation.Key), generic
//     over the Go type of a timestamp column (Time), JSONText for the JSON columns,
//     and WorkflowColumns, the workflow columns Save writes from a state.
//   - Methods of conversation.Store less their SQL: Save, DeleteIdle, Workflows, the
//     input methods Enqueue and Finish, and the lease methods Acquire, Begin, Release,
//     Abandon, Renew, Signal and Orphans (docs/architecture.md, "Durable turns").
//     Each checks its arguments (a turn Save can store; ValidStatus; a held lease),
//     reads the clock (Now), runs the statements the backend passes (as functions
//     that close over its context and connection and bind times as it stores them,
//     or as SQL) and turns what they return into the results and errors that
//     conversation.Store and the backends document, wrapped as both backends wrap
//     them. RowsAffected folds an Exec and its row count into one error.
//   - What makes a value storable in both backends: Text, JSON and Messages repair
//     NUL characters, invalid UTF-8 and the JSON escapes PostgreSQL refuses, and every
//     method applies them to what it writes.
//   - Unavailable, which marks the errors a backend classifies as transient with
//     conversation.ErrUnavailable.
//   - The methods of conversation.Knowledge less their SQL: ReplaceSource (which checks
//     and numbers the chunks), DeleteSource, Sources and Search (which bounds the query
//     and the limit), with the row types SourceRow and PassageRow.
//   - Migrations, the goose Provider of a backend's embedded schema.
//
// What differs stays in the backends: the SQL (placeholders, dialect, Postgres's
// one-statement Save, Load, Enqueue and lease methods, prepared once per connection),
// how times are stored (SQLite's INTEGER Unix microseconds, a type of the sqlite
// package, against Postgres's TIMESTAMPTZ, a time.Time), whose clock a lease expires
// by (the process's in SQLite, the database's in Postgres), their connections and
// transactions, Load and the writing half of Save, and how each tells a unique
// violation or a transient error apart.
package sqlstore
