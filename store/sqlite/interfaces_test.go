package sqlite_test

import (
	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/store/sqlite"
	"github.com/threadwright/threadwright/webhook"
)

// The parts of a Store that packages outside conversation use satisfy their
// interfaces (conversation's are asserted next to the parts).
var (
	_ webhook.Outbox = (*sqlite.Outbox)(nil)
	_ api.Store      = (*sqlite.Store)(nil)
)
