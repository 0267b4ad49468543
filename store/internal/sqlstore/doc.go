// Package sqlstore is what store/sqlite and store/postgres share of a conversation.Store
// on SQL: the Go side of their tables, which have the same columns in both schemas, and
// what their methods do around the SQL, which is the same in both backends.
//
//   - Row types and their conversions: ConversationRow, InputRow and WorkflowRow (to
//     conversation.Conversation, conversation.Input and conversation.WorkflowRef),
//     generic over the Go type of a timestamp column (Time), JSONText for the JSON
//     columns, and WorkflowColumns, the workflow columns Save writes from a state.
//   - Methods of conversation.Store less their SQL: Save, DeleteIdle, Workflows, and
//     the input methods Enqueue, Claim, Release, Finish and Pending. Each checks its
//     arguments (a turn Save can store; ValidStatus), reads the clock (Now), runs the
//     statements the backend passes (as functions that close over its context and
//     connection and bind times as it stores them, or as SQL) and turns what they
//     return into the results and errors that conversation.Store and the backends
//     document, wrapped as both backends wrap them. RowsAffected folds an Exec and its
//     row count into one error.
//   - The methods of conversation.Knowledge less their SQL: ReplaceSource (which checks
//     and numbers the chunks), DeleteSource, Sources and Search (which bounds the query
//     and the limit), with the row types SourceRow and PassageRow.
//   - Migrations, the goose Provider of a backend's embedded schema.
//
// What differs stays in the backends: the SQL (placeholders, dialect, Postgres's
// one-statement Save, Load and Claim, prepared once per connection), how times are
// stored (SQLite's INTEGER Unix microseconds, a type of the sqlite package, against
// Postgres's TIMESTAMPTZ, a time.Time), their connections and transactions, Load and
// the writing half of Save, and how each tells a unique violation apart.
package sqlstore
