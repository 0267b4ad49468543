package sqlite_test

import (
	"testing"

	"github.com/threadwright/threadwright/store/storetest"
)

func TestAPIQueries(t *testing.T) {
	storetest.RunAPI(t, func(t *testing.T) storetest.APIStore { return mustOpen(t) })
}
