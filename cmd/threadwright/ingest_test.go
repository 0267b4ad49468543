package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ingestEnv selects the embedded store in a new DATA_DIR and makes a new directory
// the working directory, with files (path → content) in it.
func ingestEnv(t *testing.T, files map[string]string) (dataDir string) {
	t.Helper()
	dataDir = t.TempDir()
	t.Setenv("DATA_DIR", dataDir)
	t.Setenv("DATABASE_URL", "")
	os.Unsetenv("DATABASE_URL")
	t.Chdir(t.TempDir())
	for name, content := range files {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dataDir
}

// ingestCmd runs `threadwright ingest args...` and returns its stdout.
func ingestCmd(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	err := runIngest(context.Background(), args, &stdout, &stderr)
	return stdout.String(), err
}

// mustContain fails unless out holds every line of want, in order.
func mustContain(t *testing.T, what, out string, want ...string) {
	t.Helper()
	rest := out
	for _, w := range want {
		i := strings.Index(rest, w)
		if i < 0 {
			t.Fatalf("%s output:\n%s\nwant %q (after the lines before it in %q)", what, out, w, want)
		}
		rest = rest[i+len(w):]
	}
}

func TestIngestCommand(t *testing.T) {
	dataDir := ingestEnv(t, map[string]string{
		"docs/handbook/leave.md": "# Parental leave\n\nSixteen weeks.\n\n# Sick leave\n\nCall in.\n",
		"docs/it/vpn.html":       "<h1>VPN</h1><p>Install WireGuard.</p>",
		"docs/notes.txt":         "caf\xe9 (Latin-1)",
	})

	out, err := ingestCmd(t, "./docs/")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "ingest", out,
		"added docs/handbook/leave.md (2 chunks)\n",
		"added docs/it/vpn.html (1 chunk)\n",
		"skipped docs/notes.txt: not text: a byte that is not UTF-8 at byte 3; save the file as UTF-8\n",
		"2 added, 0 replaced, 0 unchanged, 3 chunks stored, 1 skipped\n")
	if _, err := os.Stat(filepath.Join(dataDir, "threadwright.db")); err != nil {
		t.Errorf("no store in DATA_DIR: %v", err)
	}

	out, err = ingestCmd(t, "--list")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "ingest --list", out, "SOURCE", "CHUNKS", "INGESTED", "HASH", "ORIGIN\n",
		"docs/handbook/leave.md", "2", " UTC", "\n", "docs/it/vpn.html", "1", "\n",
		"2 sources, 3 chunks\n")

	out, err = ingestCmd(t, "docs")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "ingest again", out, "unchanged docs/handbook/leave.md\n", "0 added, 0 replaced, 2 unchanged")

	if err := os.WriteFile("docs/it/vpn.html", []byte("<h1>VPN</h1><p>Install WireGuard 2.</p><h2>Help</h2><p>Ask IT.</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = ingestCmd(t, "docs/it/vpn.html")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "ingest of a changed file", out, "replaced docs/it/vpn.html (2 chunks)\n", "0 added, 1 replaced")

	out, err = ingestCmd(t, "--delete", "./docs/it/vpn.html")
	if err != nil {
		t.Fatal(err)
	}
	mustContain(t, "ingest --delete", out, "deleted docs/it/vpn.html\n")
	out, err = ingestCmd(t, "--delete", "docs/handbook/leave.md", "nope.md", "docs/it/vpn.html")
	if err == nil || !strings.Contains(err.Error(), `no source "nope.md", "docs/it/vpn.html"`) {
		t.Errorf("--delete of missing sources: %v; want an error naming them", err)
	}
	mustContain(t, "ingest --delete", out, "deleted docs/handbook/leave.md\n")

	out, err = ingestCmd(t, "--list")
	if err != nil || !strings.Contains(out, "no sources ingested") {
		t.Errorf("--list after deleting everything = %q, %v; want no sources", out, err)
	}
}

func TestIngestCommandUsage(t *testing.T) {
	ingestEnv(t, nil)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"NoArgs", nil, "ingest: missing PATH"},
		{"ListWithArg", []string{"--list", "docs"}, `ingest: --list takes no argument, got "docs"`},
		{"ListAndDelete", []string{"--list", "--delete", "x"}, "ingest: --list and --delete go alone"},
		{"DeleteNothing", []string{"--delete"}, "ingest: --delete needs the sources to delete"},
		{"UnknownFlag", []string{"--prune"}, "ingest: flag provided but not defined: -prune"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := runIngest(context.Background(), tc.args, &stdout, &stderr)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v; want %q", err, tc.want)
			}
			if !strings.Contains(stderr.String(), "threadwright ingest --list") {
				t.Errorf("stderr = %q; want the usage", stderr.String())
			}
		})
	}
	t.Run("Help", func(t *testing.T) {
		out, err := ingestCmd(t, "-h")
		if err != nil || !strings.HasPrefix(out, "Usage:\n  threadwright ingest PATH...") {
			t.Errorf("ingest -h = %q, %v; want the usage on stdout", out, err)
		}
	})
	t.Run("BadDatabaseURL", func(t *testing.T) {
		t.Setenv("DATABASE_URL", "mysql://x")
		if _, err := ingestCmd(t, "--list"); err == nil || !strings.HasPrefix(err.Error(), "DATABASE_URL:") {
			t.Errorf("error %v; want one naming DATABASE_URL", err)
		}
	})
}

// TestIngestMissingPath: a named path that does not exist fails the command, naming
// it, and nothing of the other paths is loaded.
func TestIngestMissingPath(t *testing.T) {
	ingestEnv(t, map[string]string{"docs/handbook/leave.md": "# Leave\n\nSixteen weeks.\n"})
	out, err := ingestCmd(t, "docs/handbook", "docs/handbok", "notes.md")
	want := "ingest: docs/handbok: no such file or directory; notes.md: no such file or directory; nothing was loaded"
	if err == nil || err.Error() != want {
		t.Fatalf("ingest of missing paths: err %v, out %q; want %q", err, out, want)
	}
	if out, err := ingestCmd(t, "--list"); err != nil || !strings.Contains(out, "no sources ingested") {
		t.Errorf("--list after the failed ingest = %q, %v; want no sources", out, err)
	}
}
