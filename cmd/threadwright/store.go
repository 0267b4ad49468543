package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store"
)

// storeOptions are the options of the run's store and spool: DATABASE_URL (or the
// SQLite file in DATA_DIR) and DATABASE_MAX_CONNS, logging to log.
func (c *Config) storeOptions(log *slog.Logger) store.Options {
	return store.Options{DatabaseURL: c.DatabaseURL, DataDir: c.DataDir, MaxConns: c.DatabaseMaxConns, Logger: log}
}

// storeKind names the store c selects, for the log.
func storeKind(c StoreConfig) string {
	if c.DatabaseURL == "" {
		return "sqlite"
	}
	return "postgres"
}

// retain deletes conversations idle for longer than keep, once an hour, until ctx ends
// (RETENTION_DAYS).
func retain(ctx context.Context, log *slog.Logger, st conversation.Store, keep time.Duration) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := st.DeleteIdle(ctx, time.Now().Add(-keep))
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("retention: delete idle conversations", "error", err)
		case n > 0:
			log.Info("retention: deleted idle conversations", "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
