package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/threadwright/threadwright/store"
)

// TestDataDirLockedFirst: a second process on a data directory in use stops at once
// with ErrDataDirLocked, before it starts anything: its MCP servers are not run.
func TestDataDirLockedFirst(t *testing.T) {
	dir := t.TempDir()
	l, err := store.LockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Unlock()
	marker := filepath.Join(t.TempDir(), "started")
	cfg := filepath.Join(t.TempDir(), "mcp.yaml")
	if err := os.WriteFile(cfg, []byte("servers:\n  - name: probe\n    command: [\"sh\", \"-c\", \"touch "+marker+"\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	setEnv(t, map[string]string{"DATA_DIR": dir, "MCP_CONFIG": cfg})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = run(ctx, nil, io.Discard, io.Discard)
	if !errors.Is(err, store.ErrDataDirLocked) {
		t.Fatalf("start on a directory in use: %v; want ErrDataDirLocked", err)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the MCP server was started before the data directory's lock was taken")
	}
}
