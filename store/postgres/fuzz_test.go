package postgres_test

import (
	"testing"

	"github.com/threadwright/threadwright/store/storetest"
)

// FuzzSearch runs storetest.FuzzSearch on a store in a schema of its own: searchSQL
// builds a tsquery from each lexeme of the query, quoted, so no query is read as
// tsquery syntax. It skips without TEST_DATABASE_URL.
func FuzzSearch(f *testing.F) {
	storetest.FuzzSearch(f, mustOpen(f))
}
