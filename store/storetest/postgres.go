package storetest

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"testing"

	_ "github.com/lib/pq" // the postgres driver for the admin connection
)

// PostgresDSN creates a new schema in the database that TEST_DATABASE_URL names, drops
// it when the test ends, and returns a DSN whose search_path selects it, so tests and
// packages running in parallel never see each other's tables. It skips the test when
// TEST_DATABASE_URL is not set (CI sets it; see .ci/run).
func PostgresDSN(tb testing.TB) string {
	tb.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		tb.Skip("TEST_DATABASE_URL is not set; set it to a postgres:// URL to run the Postgres tests")
	}
	u, err := url.Parse(base)
	if err != nil {
		tb.Fatalf("TEST_DATABASE_URL: %v", err)
	}
	admin, err := sql.Open("postgres", base)
	if err != nil {
		tb.Fatal(err)
	}
	schema := fmt.Sprintf("tw_test_%016x", rand.Uint64())
	if _, err := admin.Exec("CREATE SCHEMA " + schema); err != nil {
		admin.Close()
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if _, err := admin.Exec("DROP SCHEMA " + schema + " CASCADE"); err != nil {
			tb.Error(err)
		}
		admin.Close()
	})
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
