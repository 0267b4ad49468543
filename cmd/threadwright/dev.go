package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/kelseyhightower/envconfig"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/playground/demo"
	"github.com/threadwright/threadwright/playground/emulator"
)

// DevConfig is what `threadwright dev` reads from the environment besides Config.
type DevConfig struct {
	DevAddr string `envconfig:"DEV_ADDR" group:"Playground" default:"127.0.0.1:3000" desc:"threadwright dev only: the address of the playground (the emulated Slack and its page). Keep it on loopback: another address exposes the playground to the network (docs/playground.md, \"Playground security\")"`
	// DemoLatency is demo.Model.Delay.
	DemoLatency time.Duration `envconfig:"DEMO_LATENCY" default:"0" desc:"threadwright dev only: how long the offline demo model waits before each answer, e.g. 2s, so that progress, thinking steps, Stop and pipelines can be watched. A stop or shutdown ends the wait. 0: at once"`
}

// devDataDir is the playground's data directory under dataDir (DATA_DIR): its own
// embedded store, which threadwright dev uses and ingest --dev fills.
func devDataDir(dataDir string) string { return filepath.Join(dataDir, "dev") }

// demoModel returns the offline demo model that dc configures.
func demoModel(dc DevConfig) (*demo.Model, error) {
	if dc.DemoLatency < 0 {
		return nil, fmt.Errorf("DEMO_LATENCY: expected a duration of 0 or more, such as 2s, got %s", dc.DemoLatency)
	}
	m := demo.New()
	m.Delay = dc.DemoLatency
	return m, nil
}

// demoBanner labels the playground when no model is configured.
const demoBanner = "Offline demo model: canned answers, no AI. Set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) to use a real model."

// runDev runs `threadwright dev`: an emulated Slack with its web page (playground/emulator)
// and the bot connected to it over Socket Mode with the real slack-go client, on the
// embedded store in $DATA_DIR/dev, whose knowledge base `threadwright ingest --dev`
// fills. With OPENAI_API_KEY or OPENAI_BASE_URL set it uses that model; otherwise the
// offline demo model (playground/demo), slowed by DEMO_LATENCY, labelled as such on the
// page and in the log. It prints the page's URL and runs until ctx ends.
func runDev(ctx context.Context, stdout, stderr io.Writer) error {
	var dc DevConfig
	if err := envconfig.Process("", &dc); err != nil {
		return configError(err)
	}
	host, _, err := net.SplitHostPort(dc.DevAddr)
	if err != nil {
		return fmt.Errorf("DEV_ADDR: expected host:port such as 127.0.0.1:3000")
	}
	m := NewMain()
	m.Stdout, m.Stderr = stdout, stderr
	c := &m.Config
	if err := envconfig.Process("", c); err != nil {
		return configError(err)
	}
	offline := os.Getenv("OPENAI_API_KEY") == "" && os.Getenv("OPENAI_BASE_URL") == ""
	banner := ""
	if offline {
		banner = demoBanner
		model, err := demoModel(dc)
		if err != nil {
			return err
		}
		m.Model = model
		// The demo's research cites placeholder pages and the playground is offline:
		// the sources phase reads the demo's canned pages and fetches nothing else.
		m.Fetcher = demo.SourceFetcher{}
		c.OpenAIAPIKey, c.OpenAIModel, c.OpenAISmallModel = "demo", "demo", "demo"
	}

	emu, err := newPlayground(dc.DevAddr, banner)
	if err != nil {
		return err
	}
	defer emu.Close()
	ec := emu.Config()
	c.SlackBotToken, c.SlackAppToken, c.SlackAPIURL = ec.BotToken, ec.AppToken, emu.URL()
	if os.Getenv("AGENT_SURFACE") == "" {
		// The playground's page shows the assistant view (docs/playground.md); the
		// emulator's agent view is driven through its Go API.
		c.AgentSurface = string(bot.SurfaceAssistant)
	}
	c.DatabaseURL = ""                // the playground always uses its own embedded store
	c.DataDir = devDataDir(c.DataDir) // threadwright ingest --dev fills its knowledge base
	if err := c.validate(); err != nil {
		return err
	}

	page := emu.PageURL()
	m.Logger = newLogger(stderr, c.LogLevel, c.LogFormat)
	if !loopback(host) {
		fmt.Fprintf(stdout, "threadwright dev: %s\n", exposedWarning)
		m.Logger.Warn("the playground listens beyond this machine", "addr", dc.DevAddr, "hint", exposedWarning)
	}
	fmt.Fprintf(stdout, "threadwright dev: open %s\n", page)
	if offline {
		fmt.Fprintln(stdout, "threadwright dev: "+demoBanner)
		if dc.DemoLatency > 0 {
			fmt.Fprintf(stdout, "threadwright dev: the demo model waits %s before each answer (DEMO_LATENCY)\n", dc.DemoLatency)
		}
		m.Logger.Warn("offline demo model: answers are canned, not from an AI model", "hint", "set OPENAI_API_KEY or OPENAI_BASE_URL")
	}
	err = m.Run(ctx)
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		// Stopped (Ctrl-C), maybe while it was still starting: a migration cut short
		// says "interrupted", not context.Canceled, and is applied again on the next run.
		return nil
	}
	return err
}

// exposedWarning is printed when DEV_ADDR is not a loopback address.
const exposedWarning = "WARNING: DEV_ADDR is not a loopback address. Anyone who can reach it can open the playground, " +
	"read every conversation and post as any member, which runs the model and its tools. See docs/playground.md, \"Playground security\"."

// newPlayground starts the emulated Slack of `threadwright dev` on addr, hardened
// (emulator.Config.Hardened): tokens random per run and only in the Authorization
// header, Host and Origin checked, and the page's requests tied to a session cookie.
func newPlayground(addr, banner string) (*emulator.Server, error) {
	emu, err := emulator.NewServer(emulator.Config{Addr: addr, Banner: banner, Hardened: true})
	if err != nil {
		return nil, fmt.Errorf("DEV_ADDR: start the playground on %s: %w", addr, err)
	}
	return emu, nil
}

// loopback reports whether host (of DEV_ADDR) is localhost or a loopback IP address.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
