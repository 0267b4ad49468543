package knowledge_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/knowledge"
	"github.com/threadwright/threadwright/store/sqlite"
)

// mustOpen opens a SQLite store in a temporary directory.
func mustOpen(t *testing.T) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "threadwright.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// writeFiles creates files (path → content) under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sources returns the sources stored in kb and their chunk counts.
func sources(t *testing.T, kb conversation.Knowledge) map[string]int {
	t.Helper()
	infos, err := kb.Sources(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, info := range infos {
		out[info.Source] = info.Chunks
	}
	return out
}

// counts returns r without its skipped files, to compare counts.
func counts(r knowledge.Report) knowledge.Report {
	r.Skipped = nil
	return r
}

func TestIngest(t *testing.T) {
	t.Chdir(t.TempDir())
	writeFiles(t, ".", map[string]string{
		"docs/handbook/leave.md": "# Parental leave\n\nSixteen weeks of paid parental leave.\n\n# Sick leave\n\nTell your manager.\n",
		"docs/notes.TXT":         "Plain notes about the VPN.\n\nSecond paragraph.",
		"docs/page.html":         "<title>Expenses</title><h2>Travel</h2><p>Meals up to 40 € a day.</p>",
		"docs/empty.md":          "",
		"docs/latin1.txt":        "caf\xe9",
		"docs/binary.md":         "PK\x03\x04\x00\x00",
		"docs/image.png":         "\x89PNG",
		"docs/.hidden/secret.md": "# Secret",
		"docs/.draft.md":         "# Draft",
		"other.md":               "# Other\n\ntext",
	})
	kb := mustOpen(t)
	ctx := context.Background()
	var log []string
	logf := func(format string, args ...any) { log = append(log, fmt.Sprintf(format, args...)) }

	r, err := knowledge.Ingest(ctx, kb, []string{"./docs/", "missing", "docs/image.png", "other.md", "docs/handbook/leave.md"}, logf)
	if err != nil {
		t.Fatal(err)
	}
	if want := (knowledge.Report{Added: 5, Chunks: 5}); !reflect.DeepEqual(counts(r), want) {
		t.Errorf("first ingest = %+v; want %+v", r, want)
	}
	wantSkipped := []knowledge.Skipped{
		{Path: "docs/binary.md", Reason: "not text: a NUL byte at byte 4, as binary files and UTF-16 text have"},
		{Path: "docs/latin1.txt", Reason: "not text: a byte that is not UTF-8 at byte 3; save the file as UTF-8"},
		{Path: "missing", Reason: "no such file or directory"},
		{Path: "docs/image.png", Reason: "unsupported file type (want .md, .markdown, .txt, .html or .htm)"},
	}
	if !reflect.DeepEqual(r.Skipped, wantSkipped) {
		t.Errorf("skipped = %+v; want %+v", r.Skipped, wantSkipped)
	}
	wantSources := map[string]int{
		"docs/empty.md": 0, "docs/handbook/leave.md": 2, "docs/notes.TXT": 1, "docs/page.html": 1, "other.md": 1,
	}
	if got := sources(t, kb); !reflect.DeepEqual(got, wantSources) {
		t.Errorf("sources = %v; want %v", got, wantSources)
	}
	if !strings.Contains(strings.Join(log, "\n"), "added docs/handbook/leave.md (2 chunks)") {
		t.Errorf("log = %q; want a line for each document", log)
	}
	ps, err := kb.Search(ctx, "how many weeks of parental leave", 1)
	if err != nil || len(ps) != 1 || ps[0].Source != "docs/handbook/leave.md" || ps[0].Heading != "Parental leave" {
		t.Errorf("Search = %+v, %v; want docs/handbook/leave.md, Parental leave", ps, err)
	}

	t.Run("Again", func(t *testing.T) {
		r, err := knowledge.Ingest(ctx, kb, []string{"docs", "other.md"}, nil)
		if want := (knowledge.Report{Unchanged: 5}); err != nil || !reflect.DeepEqual(counts(r), want) {
			t.Errorf("ingest again = %+v, %v; want %+v", r, err, want)
		}
	})
	t.Run("Changed", func(t *testing.T) {
		writeFiles(t, ".", map[string]string{"docs/handbook/leave.md": "# Parental leave\n\nTwenty weeks now.\n"})
		r, err := knowledge.Ingest(ctx, kb, []string{"docs"}, nil)
		if want := (knowledge.Report{Replaced: 1, Unchanged: 3, Chunks: 1}); err != nil || !reflect.DeepEqual(counts(r), want) {
			t.Errorf("ingest of a changed file = %+v, %v; want %+v", r, err, want)
		}
		if got := sources(t, kb)["docs/handbook/leave.md"]; got != 1 {
			t.Errorf("docs/handbook/leave.md has %d chunks; want 1", got)
		}
		if ps, _ := kb.Search(ctx, "sixteen", 5); len(ps) != 0 {
			t.Errorf("Search(sixteen) = %+v; want the old chunks gone", ps)
		}
	})
	t.Run("AbsolutePath", func(t *testing.T) {
		abs, err := filepath.Abs("other.md")
		if err != nil {
			t.Fatal(err)
		}
		r, err := knowledge.Ingest(ctx, kb, []string{abs}, nil)
		if err != nil || r.Added != 1 {
			t.Fatalf("ingest of %s = %+v, %v; want 1 added", abs, r, err)
		}
		if _, ok := sources(t, kb)[filepath.ToSlash(abs)]; !ok {
			t.Errorf("sources = %v; want %s, the path as given", sources(t, kb), filepath.ToSlash(abs))
		}
	})
}

func TestIngestUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root reads files whatever their mode")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"locked.md": "# Locked", "sub/open.md": "# Open\n\ntext", "ok.md": "# OK\n\ntext"})
	if err := os.Chmod(filepath.Join(dir, "locked.md"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "sub"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(dir, "sub"), 0o755) })
	r, err := knowledge.Ingest(context.Background(), mustOpen(t), []string{dir}, nil)
	if err != nil || r.Added != 1 || len(r.Skipped) != 2 {
		t.Fatalf("Ingest = %+v, %v; want 1 added, 2 skipped", r, err)
	}
	for _, s := range r.Skipped {
		if s.Reason != "permission denied" {
			t.Errorf("skipped %s: %q; want permission denied", s.Path, s.Reason)
		}
	}
}

// failingKB is a knowledge base whose writes fail.
type failingKB struct {
	conversation.Knowledge
	err error
}

func (f failingKB) Sources(context.Context) ([]conversation.SourceInfo, error) { return nil, nil }

func (f failingKB) ReplaceSource(context.Context, string, string, conversation.Origin, []conversation.Chunk) (bool, error) {
	return false, f.err
}

func TestIngestStoreError(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "a", "b.md": "b"})
	boom := errors.New("database is down")
	r, err := knowledge.Ingest(context.Background(), failingKB{err: boom}, []string{dir}, nil)
	if !errors.Is(err, boom) || r.Added != 0 {
		t.Errorf("Ingest = %+v, %v; want the store's error at the first file", r, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := knowledge.Ingest(ctx, mustOpen(t), []string{dir}, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Ingest with a cancelled context: %v; want context.Canceled", err)
	}
}

func TestChunks(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		want    error
	}{
		{"a.MD", "# A", nil},
		{"a.markdown", "# A", nil},
		{"a.htm", "<p>A</p>", nil},
		{"a.pdf", "%PDF", knowledge.ErrUnsupported},
		{"noext", "text", knowledge.ErrUnsupported},
		{"utf16.txt", "\xff\xfeA\x00", knowledge.ErrNotText},
		{"nul.md", "a\x00b", knowledge.ErrNotText},
		// Numbered items eight lists deep: each 5 bytes of HTML makes 23 of Markdown.
		{"deep.html", strings.Repeat("<ol>", 8) + strings.Repeat("<li>x", 20_000), knowledge.ErrTooMuchText},
	} {
		if _, err := knowledge.Chunks(tc.name, []byte(tc.content)); !errors.Is(err, tc.want) {
			t.Errorf("Chunks(%s): %v; want %v", tc.name, err, tc.want)
		}
	}
}

// A file that is not text is told apart by why: a NUL byte (binary, UTF-16) or a byte
// that is not UTF-8 (another character set), and where.
func TestChunksSaysWhyNotText(t *testing.T) {
	for content, want := range map[string]string{
		"ab\x00c":    "not text: a NUL byte at byte 2, as binary files and UTF-16 text have",
		"caf\xe9 au": "not text: a byte that is not UTF-8 at byte 3; save the file as UTF-8",
	} {
		_, err := knowledge.Chunks("a.txt", []byte(content))
		if !errors.Is(err, knowledge.ErrNotText) || err.Error() != "knowledge: "+want {
			t.Errorf("Chunks(%q) = %v; want ErrNotText, %q", content, err, want)
		}
	}
}
