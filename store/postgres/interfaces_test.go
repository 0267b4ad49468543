package postgres_test

import (
	"github.com/threadwright/threadwright/api"
	"github.com/threadwright/threadwright/store/postgres"
	"github.com/threadwright/threadwright/webhook"
)

// The parts of a Store that packages outside conversation use satisfy their
// interfaces (conversation's are asserted next to the parts).
var (
	_ webhook.Outbox = (*postgres.Outbox)(nil)
	_ api.Store      = (*postgres.Store)(nil)
)
