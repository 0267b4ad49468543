package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/kelseyhightower/envconfig"
	"github.com/threadwright/threadwright/bot"
)

const programUsage = `threadwright runs LLM agents inside Slack threads.

Usage:
  threadwright [run]     run the bot
  threadwright dev       run a local playground: an emulated Slack in the browser with the bot
                         (offline demo model unless OPENAI_API_KEY or OPENAI_BASE_URL is set)
  threadwright migrate   apply the store's migrations and exit
  threadwright ingest [--dev] PATH...
                         load Markdown, text and HTML files and directories into the knowledge base
  threadwright ingest --list | --delete SOURCE...
                         list the ingested sources, or delete some
  threadwright manifest  print the Slack app manifest (YAML) to create the app from
  threadwright feedback [--since 7d] [--json] [--dev]
                         the feedback on answers: counts per channel and strategy, and the
                         negative answers with their reasons (--dev: the playground's)
  threadwright usage [--since 30d] [--by channel|user|workflow|model] [--csv] [--dev]
                         tokens, turns and estimated cost (MODEL_PRICES) per channel, person,
                         workflow or model (--dev: the playground's)
  threadwright healthcheck
                         exit 0 when /readyz on HTTP_ADDR says ready, 1 otherwise (for HEALTHCHECK)
  threadwright workflows list
                         list the workflows (built-in and $WORKFLOWS_DIR)
  threadwright workflows validate [PATH...]
                         check workflow files (default: all); exits non-zero with file:line: reason
  threadwright eval [--demo | --replay FILE] [--record FILE] [--json FILE] [--junit FILE] [PATH...]
                         run eval cases (default: the shipped set) through the real pipeline with an
                         emulated Slack and judge them; --compare OLD.json NEW.json: regressions
                         (docs/eval.md)
  threadwright version   print the version
  threadwright help      print this help

`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "threadwright:", err)
		os.Exit(1)
	}
}

// run executes the subcommand named by args[0] (run when absent).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cmd := "run"
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "run":
		m := NewMain()
		m.Stdout, m.Stderr = stdout, stderr
		m.SetDefault = true
		if err := LoadConfig(&m.Config); err != nil {
			return err
		}
		return m.Run(ctx)
	case "dev":
		return runDev(ctx, stdout, stderr)
	case "migrate":
		st, err := openStore(ctx, stderr)
		if err != nil {
			return err
		}
		fmt.Fprintln(stdout, "migrations applied")
		return st.Close()
	case "ingest":
		return runIngest(ctx, args[1:], stdout, stderr)
	case "feedback":
		return runFeedback(ctx, args[1:], time.Now(), stdout, stderr)
	case "usage":
		return runUsage(ctx, args[1:], time.Now(), stdout, stderr)
	case "healthcheck":
		return runHealthcheck(ctx, stdout)
	case "eval":
		return runEval(ctx, args[1:], stdout, stderr)
	case "workflows":
		profiles, err := profileNames(os.Getenv("MODEL_PROFILES"))
		if err != nil {
			return err
		}
		return runWorkflows(args[1:], os.Getenv("WORKFLOWS_DIR"), webSearchConfigured(os.Getenv), profiles, stdout, stderr)
	case "manifest":
		surface := bot.Surface(cmp.Or(os.Getenv("AGENT_SURFACE"), string(bot.SurfaceAgent)))
		if surface != bot.SurfaceAgent && surface != bot.SurfaceAssistant {
			return fmt.Errorf("AGENT_SURFACE=%q: want agent or assistant", surface)
		}
		out, err := bot.NewManifestFor("threadwright", surface).YAML()
		if err != nil {
			return err
		}
		_, err = stdout.Write(out)
		return err
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "threadwright", version)
		return nil
	case "help", "--help", "-h":
		fmt.Fprint(stdout, programUsage)
		return printEnvUsage(stdout)
	default:
		fmt.Fprint(stderr, programUsage)
		return errors.New("unknown command " + fmt.Sprintf("%q", cmd))
	}
}

// printEnvUsage writes the table of configuration variables, generated from Config's
// tags: each variable with its default on a line, then its description wrapped to
// fit helpWidth columns, indented.
func printEnvUsage(w io.Writer) error {
	var rows strings.Builder
	const row = "{{range .}}{{usage_key .}}\x1f{{usage_default .}}\x1f{{usage_description .}}\x1e{{end}}"
	if err := envconfig.Usagef("", &Config{}, &rows, row); err != nil {
		return err
	}
	if err := envconfig.Usagef("", &DevConfig{}, &rows, row); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("Environment:\n")
	for r := range strings.SplitSeq(strings.TrimSuffix(rows.String(), "\x1e"), "\x1e") {
		key, rest, _ := strings.Cut(r, "\x1f")
		def, desc, _ := strings.Cut(rest, "\x1f")
		head := "  " + key
		if def != "" {
			head += " (default " + def + ")"
		}
		if utf8.RuneCountInString(head) > helpWidth {
			// A long default (a list) goes under the name, a comma-separated word
			// at a time.
			head = "  " + key + "\n" + wrapText("default "+strings.ReplaceAll(def, ",", ", "), "      ", helpWidth)
		}
		b.WriteString(head + "\n" + wrapText(desc, "      ", helpWidth) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// helpWidth is the widest line of the help, in characters.
const helpWidth = 100

// wrapText breaks text into lines of at most width characters (a longer word gets a
// line of its own), each after indent.
func wrapText(text, indent string, width int) string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		if line != "" && utf8.RuneCountInString(indent+line+" "+word) > width {
			lines = append(lines, indent+line)
			line = ""
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		lines = append(lines, indent+line)
	}
	return strings.Join(lines, "\n")
}

// version is the build's version, set at build time: -ldflags "-X main.version=v1.2.3".
// It is printed by `threadwright version`, logged at start, and exported with the
// metrics (threadwright_build_info) and the traces (service.version).
var version = "dev"
