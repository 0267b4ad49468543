package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/knowledge"
	"github.com/threadwright/threadwright/store"
)

const ingestUsage = `Usage:
  threadwright ingest PATH...             load documents into the knowledge base: Markdown
                                          (.md, .markdown), text (.txt) and HTML (.html, .htm)
                                          files, and directories of them, recursively; a
                                          changed file's chunks are replaced, an unchanged file
                                          is left as it is
  threadwright ingest --list              list the ingested sources
  threadwright ingest --delete SOURCE...  remove sources (as --list names them) and their chunks
  --dev                                   (with any of the above) use the knowledge base of the
                                          playground, threadwright dev: the SQLite store in
                                          $DATA_DIR/dev

A source is named by its path as given, cleaned: ingest from the directory you will ingest
from again. The knowledge base is in the store that DATABASE_URL names (the SQLite file in
DATA_DIR when unset); the search_knowledge tool searches it. A PATH that does not exist
fails the command before anything is loaded. Files inside a directory that cannot be read,
are not UTF-8 text or are larger than 10 MiB are skipped with a reason.
`

// runIngest runs "threadwright ingest ARGS" (args are what follows "ingest"): it
// loads the documents that args name into the knowledge base (knowledge.Ingest), or
// lists (--list) or deletes (--delete SOURCE...) its sources, in the store that
// StoreConfig selects, or with --dev in the playground's. What it did goes to stdout, usage and the store's log line to
// stderr; the error is what main prints before exiting non-zero. A skipped file is
// reported, not an error; a named path that does not exist is.
func runIngest(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("ingest", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	list := flags.Bool("list", false, "list the ingested sources")
	del := flags.Bool("delete", false, "remove the sources named")
	dev := flags.Bool("dev", false, "use the playground's store, $DATA_DIR/dev")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, ingestUsage)
			return nil
		}
		fmt.Fprint(stderr, ingestUsage)
		return fmt.Errorf("ingest: %w", err)
	}
	rest := flags.Args()
	var usageErr string
	switch {
	case *list && *del:
		usageErr = "--list and --delete go alone"
	case *list && len(rest) > 0:
		usageErr = fmt.Sprintf("--list takes no argument, got %q", rest[0])
	case *del && len(rest) == 0:
		usageErr = "--delete needs the sources to delete"
	case !*list && len(rest) == 0:
		usageErr = "missing PATH"
	}
	if usageErr != "" {
		fmt.Fprint(stderr, ingestUsage)
		return errors.New("ingest: " + usageErr)
	}

	if !*list && !*del {
		if err := namedPathsExist(rest); err != nil {
			return err
		}
	}
	kb, closeStore, err := openKnowledge(ctx, stderr, *dev)
	if err != nil {
		return err
	}
	switch {
	case *list:
		err = listSources(ctx, kb, stdout)
	case *del:
		err = deleteSources(ctx, kb, rest, stdout)
	default:
		err = ingest(ctx, kb, rest, stdout)
	}
	return errors.Join(err, closeStore())
}

// openKnowledge opens the store that StoreConfig selects, as `threadwright migrate`
// does, or with dev the playground's (devDataDir), and returns it as a
// conversation.Knowledge with the function that closes it.
func openKnowledge(ctx context.Context, stderr io.Writer, dev bool) (conversation.Knowledge, func() error, error) {
	var c StoreConfig
	if err := LoadConfig(&c); err != nil {
		return nil, nil, err
	}
	if dev {
		c.DatabaseURL, c.DataDir = "", devDataDir(c.DataDir)
	}
	st, err := store.Open(ctx, store.Options{DatabaseURL: c.DatabaseURL, DataDir: c.DataDir, Logger: c.logger(stderr)})
	if err != nil {
		return nil, nil, err
	}
	kb, ok := st.(conversation.Knowledge)
	if !ok {
		return nil, nil, errors.Join(fmt.Errorf("ingest: the store (%T) has no knowledge base", st), st.Close())
	}
	return kb, st.Close, nil
}

// namedPathsExist returns an error naming every path of paths that cannot be found
// (os.Stat), so that a mistyped path fails the command before anything is loaded;
// a file inside a named directory that cannot be read is only skipped.
func namedPathsExist(paths []string) error {
	var missing []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = fmt.Errorf("%s: %w", p, pe.Err)
			}
			missing = append(missing, err.Error())
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("ingest: %s; nothing was loaded", strings.Join(missing, "; "))
}

// ingest loads paths into kb, printing a line per document and a summary.
func ingest(ctx context.Context, kb conversation.Knowledge, paths []string, stdout io.Writer) error {
	r, err := knowledge.Ingest(ctx, kb, paths, func(format string, args ...any) {
		fmt.Fprintf(stdout, format+"\n", args...)
	})
	fmt.Fprintln(stdout, r)
	if err != nil {
		return fmt.Errorf("ingest: %w", err)
	}
	return nil
}

// listSources prints kb's sources as a table, and their totals.
func listSources(ctx context.Context, kb conversation.Knowledge, stdout io.Writer) error {
	infos, err := kb.Sources(ctx)
	if err != nil {
		return fmt.Errorf("ingest --list: %w", err)
	}
	if len(infos) == 0 {
		fmt.Fprintln(stdout, "no sources ingested (threadwright ingest PATH... adds them)")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SOURCE\tCHUNKS\tINGESTED\tHASH\tORIGIN")
	chunks := 0
	for _, s := range infos {
		origin := s.Origin.By
		if s.Origin.Untrusted {
			origin += " (untrusted)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%.12s\t%s\n", textcut.Printable(s.Source), s.Chunks, s.IngestedAt.UTC().Format("2006-01-02 15:04 UTC"), s.Hash,
			textcut.Printable(origin))
		chunks += s.Chunks
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d sources, %d chunks\n", len(infos), chunks)
	return nil
}

// deleteSources deletes each source in sources from kb (cleaned as ingest names them:
// ./handbook/a.md is handbook/a.md), printing a line for each. Sources that do not exist are
// named in the error, after the others are deleted; another error stops at once.
func deleteSources(ctx context.Context, kb conversation.Knowledge, sources []string, stdout io.Writer) error {
	var missing []string
	for _, s := range sources {
		s = filepath.ToSlash(filepath.Clean(s))
		err := kb.DeleteSource(ctx, s)
		switch {
		case errors.Is(err, conversation.ErrNotFound):
			missing = append(missing, fmt.Sprintf("%q", s))
		case err != nil:
			return fmt.Errorf("ingest --delete: %w", err)
		default:
			fmt.Fprintf(stdout, "deleted %s\n", s)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("ingest --delete: no source %s (threadwright ingest --list names them)", strings.Join(missing, ", "))
	}
	return nil
}
