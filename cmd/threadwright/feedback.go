package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/store"
)

const feedbackUsage = `Usage:
  threadwright feedback [--since 7d] [--json] [--dev]
                         the feedback on answers given since then (a duration such as 7d, 36h or
                         90m): counts per channel and strategy, then the negative answers with
                         their reasons, newest first; --json prints the same as one JSON object;
                         --dev reads the playground's store (threadwright dev), $DATA_DIR/dev

Feedback is read from the store that DATABASE_URL names (the SQLite file in DATA_DIR when
unset); a SQLite file that does not exist yet is an error, never created. It is never sent
anywhere else (docs/operations.md, "Feedback").
`

// runFeedback runs "threadwright feedback ARGS" (args are what follows "feedback"):
// it prints the report of the feedback stored since --since (conversation.FeedbackReport)
// as tables (text/tabwriter) or, with --json, as JSON, to stdout. now is the time
// --since counts back from.
func runFeedback(ctx context.Context, args []string, now time.Time, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("feedback", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	sinceArg := flags.String("since", "7d", "how far back")
	asJSON := flags.Bool("json", false, "print JSON")
	dev := flags.Bool("dev", false, "read the playground's store, $DATA_DIR/dev")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, feedbackUsage)
			return nil
		}
		fmt.Fprint(stderr, feedbackUsage)
		return fmt.Errorf("feedback: %w", err)
	}
	if flags.NArg() > 0 {
		fmt.Fprint(stderr, feedbackUsage)
		return fmt.Errorf("feedback: unexpected argument %q", flags.Arg(0))
	}
	back, err := parseSince(*sinceArg)
	if err != nil {
		fmt.Fprint(stderr, feedbackUsage)
		return fmt.Errorf("feedback: --since: %w", err)
	}
	st, err := openExistingStore(ctx, stderr, "feedback", *dev)
	if err != nil {
		return err
	}
	fs, ok := st.(conversation.FeedbackStore)
	if !ok {
		return errors.Join(fmt.Errorf("feedback: the store (%T) keeps no feedback", st), st.Close())
	}
	since := now.Add(-back).UTC()
	items, err := fs.ListFeedback(ctx, since)
	if err != nil {
		return errors.Join(fmt.Errorf("feedback: %w", err), st.Close())
	}
	r := conversation.NewFeedbackReport(since, items)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(r)
	} else {
		err = printFeedback(stdout, r)
	}
	return errors.Join(err, st.Close())
}

// openExistingStore opens the store that StoreConfig selects, or with dev the
// playground's (devDataDir), for a command that only reads it (cmd names it in errors).
// A SQLite file that does not exist is an error that says where it was looked for:
// reading creates no empty store as a side effect.
func openExistingStore(ctx context.Context, stderr io.Writer, cmd string, dev bool) (conversation.Store, error) {
	var c StoreConfig
	if err := LoadConfig(&c); err != nil {
		return nil, err
	}
	if dev {
		c.DatabaseURL, c.DataDir = "", devDataDir(c.DataDir)
	}
	if c.DatabaseURL == "" {
		path := filepath.Join(c.DataDir, store.FileName)
		if _, err := os.Stat(path); err != nil {
			hint := "threadwright has not run with this DATA_DIR"
			if dev {
				hint = "the playground (threadwright dev) has not run with this DATA_DIR"
			} else if _, err := os.Stat(filepath.Join(devDataDir(c.DataDir), store.FileName)); err == nil {
				hint += "; the playground's store is read with --dev"
			}
			return nil, fmt.Errorf("%s: no store at %s (%s)", cmd, path, hint)
		}
	}
	return store.Open(ctx, store.Options{DatabaseURL: c.DatabaseURL, DataDir: c.DataDir, Logger: c.logger(stderr)})
}

// parseSince reads a duration as time.ParseDuration does, or a number of days ("7d").
// Errors: not a positive duration.
func parseSince(s string) (time.Duration, error) {
	var d time.Duration
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		d = time.Duration(n) * 24 * time.Hour
	} else {
		var err error
		if d, err = time.ParseDuration(s); err != nil {
			return 0, err
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not a positive duration", s)
	}
	return d, nil
}

// printFeedback prints r as two tables: counts, then negative answers.
func printFeedback(w io.Writer, r conversation.FeedbackReport) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Feedback since %s\n\n", r.Since.Format("2006-01-02 15:04 MST"))
	if len(r.Counts) == 0 {
		fmt.Fprintln(tw, "No feedback.")
		return tw.Flush()
	}
	fmt.Fprintln(tw, "CHANNEL\tSTRATEGY\tPOSITIVE\tNEGATIVE")
	for _, c := range r.Counts {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\n", textcut.Printable(c.Channel), textcut.Printable(orDash(c.Strategy)), c.Positive, c.Negative)
	}
	if len(r.Negative) > 0 {
		fmt.Fprintln(tw, "\nNegative answers:")
		fmt.Fprintln(tw, "WHEN\tCHANNEL\tMESSAGE\tUSER\tMODEL\tTOOLS\tLATENCY\tTOKENS\tREASON")
		for _, f := range r.Negative {
			// Printable: a reason is typed by anyone in Slack, and the store's other
			// fields are not the terminal's to trust either.
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\n", f.CreatedAt.Format("2006-01-02 15:04"),
				textcut.Printable(f.Key.ChannelID), textcut.Printable(f.MessageTS), textcut.Printable(f.UserID),
				textcut.Printable(orDash(f.Model)), textcut.Printable(orDash(strings.Join(f.Tools, ","))), f.Latency.Round(time.Millisecond),
				f.PromptTokens+f.CompletionTokens, textcut.Printable(orDash(strings.Join(strings.Fields(f.Reason), " "))))
		}
	}
	return tw.Flush()
}

// orDash returns s, or "-" for "".
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// openStore opens the store that StoreConfig selects (DATABASE_URL, or the SQLite
// file in DATA_DIR), applying its migrations, for the subcommands that only use the
// store; its log goes to stderr.
func openStore(ctx context.Context, stderr io.Writer) (conversation.Store, error) {
	var c StoreConfig
	if err := LoadConfig(&c); err != nil {
		return nil, err
	}
	return store.Open(ctx, store.Options{DatabaseURL: c.DatabaseURL, DataDir: c.DataDir, Logger: c.logger(stderr)})
}
