package main

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/threadwright/threadwright/conversation"
)

const usageUsage = `Usage:
  threadwright usage [--since 30d] [--by channel|user|workflow|model] [--csv] [--dev]
                         tokens (prompt, completion), turns and the estimated cost since then
                         (a duration such as 30d, 36h or 90m), one line per channel, person,
                         workflow or model, largest first; --csv prints CSV; --dev reads the
                         playground's store (threadwright dev), $DATA_DIR/dev

Usage is read from the usage ledger of the store that DATABASE_URL names (the SQLite file
in DATA_DIR when unset; one that does not exist yet is an error, never created). Costs come
from the MODEL_PRICES file (YAML or JSON: per model, USD per million input and output
tokens); a line with a model it does not price shows its cost as "?" (docs/operations.md,
"Usage, cost and budgets").
`

// usageConfig is what the usage command reads from the environment besides the store.
type usageConfig struct {
	ModelPrices string `envconfig:"MODEL_PRICES" group:"Usage reports" desc:"threadwright usage and threadwright eval only: YAML or JSON file of model prices in USD per million input and output tokens, such as gpt-4o: {input: 2.50, output: 10.00} (docs/operations.md, \"Usage, cost and budgets\")"`
}

// usageLine is one line of the usage report: a group's sums over its models.
type usageLine struct {
	Group            string
	Turns            int64
	PromptTokens     int64
	CompletionTokens int64
	Cost             float64
	// Unpriced lists the group's models that MODEL_PRICES does not price: its cost
	// is unknown then.
	Unpriced []string
}

// usageLines sums totals (a group's lines, one per model) by group, priced with p,
// in the order of each group's first line.
func usageLines(totals []conversation.UsageTotal, p conversation.Prices) []usageLine {
	var lines []usageLine
	at := map[string]int{}
	for _, t := range totals {
		i, ok := at[t.Group]
		if !ok {
			i = len(lines)
			at[t.Group] = i
			lines = append(lines, usageLine{Group: t.Group})
		}
		l := &lines[i]
		l.Turns += t.Turns
		l.PromptTokens += t.PromptTokens
		l.CompletionTokens += t.CompletionTokens
		if c, ok := p.Cost(t.Model, t.PromptTokens, t.CompletionTokens); ok {
			l.Cost += c
		} else if !slices.Contains(l.Unpriced, t.Model) {
			l.Unpriced = append(l.Unpriced, t.Model)
		}
	}
	slices.SortStableFunc(lines, func(a, b usageLine) int {
		return int((b.PromptTokens + b.CompletionTokens) - (a.PromptTokens + a.CompletionTokens))
	})
	return lines
}

// runUsage runs "threadwright usage ARGS" (args are what follows "usage"): it prints
// the usage ledger's totals since --since, grouped by --by, as a table
// (text/tabwriter) or, with --csv, as CSV (encoding/csv), to stdout. now is the time
// --since counts back from.
func runUsage(ctx context.Context, args []string, now time.Time, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("usage", flag.ContinueOnError)
	flags.SetOutput(io.Discard)
	sinceArg := flags.String("since", "30d", "how far back")
	byArg := flags.String("by", "channel", "channel, user, workflow or model")
	asCSV := flags.Bool("csv", false, "print CSV")
	dev := flags.Bool("dev", false, "read the playground's store, $DATA_DIR/dev")
	fail := func(err error) error {
		fmt.Fprint(stderr, usageUsage)
		return fmt.Errorf("usage: %w", err)
	}
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usageUsage)
			return nil
		}
		return fail(err)
	}
	if flags.NArg() > 0 {
		return fail(fmt.Errorf("unexpected argument %q", flags.Arg(0)))
	}
	back, err := parseSince(*sinceArg)
	if err != nil {
		return fail(fmt.Errorf("--since: %w", err))
	}
	by := conversation.UsageBy(*byArg)
	switch by {
	case conversation.UsageByChannel, conversation.UsageByUser, conversation.UsageByWorkflow, conversation.UsageByModel:
	default:
		return fail(fmt.Errorf("--by: want channel, user, workflow or model, got %q", *byArg))
	}
	var uc usageConfig
	if err := envconfig.Process("", &uc); err != nil {
		return configError(err)
	}
	prices, err := conversation.LoadPrices(uc.ModelPrices)
	if err != nil {
		return err
	}
	st, err := openExistingStore(ctx, stderr, "usage", *dev)
	if err != nil {
		return err
	}
	us, ok := st.(conversation.UsageStore)
	if !ok {
		return errors.Join(fmt.Errorf("usage: the store (%T) keeps no usage ledger", st), st.Close())
	}
	since := now.Add(-back).UTC()
	totals, err := us.UsageReport(ctx, since, by)
	if err != nil {
		return errors.Join(fmt.Errorf("usage: %w", err), st.Close())
	}
	lines := usageLines(totals, prices)
	if *asCSV {
		err = printUsageCSV(stdout, by, lines)
	} else {
		err = printUsage(stdout, by, since, lines)
	}
	return errors.Join(err, st.Close())
}

// usageHeader is the header of the usage report grouped by by.
func usageHeader(by conversation.UsageBy) []string {
	return []string{string(by), "turns", "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd"}
}

// costText is l's cost with four decimals, or "?" when a model of it has no price.
func (l usageLine) costText() string {
	if len(l.Unpriced) > 0 {
		return "?"
	}
	return strconv.FormatFloat(l.Cost, 'f', 4, 64)
}

// groupText names l's group, "-" for rows without one (a pipeline's turns by user,
// free conversation by workflow).
func (l usageLine) groupText() string {
	if l.Group == "" {
		return "-"
	}
	return l.Group
}

func (l usageLine) cells() []string {
	return []string{l.groupText(), strconv.FormatInt(l.Turns, 10), strconv.FormatInt(l.PromptTokens, 10),
		strconv.FormatInt(l.CompletionTokens, 10), strconv.FormatInt(l.PromptTokens+l.CompletionTokens, 10), l.costText()}
}

// printUsage writes lines as an aligned table with a total line, then a note naming
// the models without a price.
func printUsage(w io.Writer, by conversation.UsageBy, since time.Time, lines []usageLine) error {
	fmt.Fprintf(w, "Usage since %s, by %s\n\n", since.Format(time.RFC3339), by)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join(usageHeader(by), "\t")+"\t")
	total := usageLine{Group: "total"}
	var unpriced []string
	for _, l := range lines {
		fmt.Fprintln(tw, strings.Join(l.cells(), "\t")+"\t")
		total.Turns += l.Turns
		total.PromptTokens += l.PromptTokens
		total.CompletionTokens += l.CompletionTokens
		total.Cost += l.Cost
		for _, m := range l.Unpriced {
			if !slices.Contains(unpriced, m) {
				unpriced = append(unpriced, m)
			}
		}
	}
	total.Unpriced = unpriced
	fmt.Fprintln(tw, strings.Join(total.cells(), "\t")+"\t")
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(unpriced) > 0 {
		slices.Sort(unpriced)
		names := make([]string, len(unpriced))
		for i, m := range unpriced {
			names[i] = strconv.Quote(m)
		}
		fmt.Fprintf(w, "\nNote: MODEL_PRICES has no price for %s; their cost is shown as \"?\".\n", strings.Join(names, ", "))
	}
	return nil
}

// printUsageCSV writes lines as CSV with a header row; an unknown cost is "?".
func printUsageCSV(w io.Writer, by conversation.UsageBy, lines []usageLine) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(usageHeader(by)); err != nil {
		return err
	}
	for _, l := range lines {
		cells := l.cells()
		if l.Group == "" {
			cells[0] = ""
		}
		if err := cw.Write(cells); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// usageStore returns st's usage ledger, or nil when it keeps none (budgets off).
func usageStore(st conversation.Store) conversation.UsageStore {
	us, _ := st.(conversation.UsageStore)
	return us
}
