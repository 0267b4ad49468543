package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"

	"github.com/kelseyhightower/envconfig"

	"github.com/threadwright/threadwright/agents/demo"
	"github.com/threadwright/threadwright/bot/emulator"
)

// DevConfig is what `threadwright dev` reads from the environment besides Config.
type DevConfig struct {
	DevAddr string `envconfig:"DEV_ADDR" default:"127.0.0.1:3000" desc:"threadwright dev: address of the playground (the emulated Slack and its web page)"`
}

// demoBanner labels the playground when no model is configured.
const demoBanner = "Offline demo model: canned answers, no AI. Set OPENAI_API_KEY (or OPENAI_BASE_URL for a local server) to use a real model."

// runDev runs `threadwright dev`: an emulated Slack with its web page (bot/emulator)
// and the bot connected to it over Socket Mode with the real slack-go client, on the
// embedded store in $DATA_DIR/dev. With OPENAI_API_KEY or OPENAI_BASE_URL set it uses
// that model; otherwise the offline demo model (agents/demo), labelled as such on the
// page and in the log. It prints the page's URL and runs until ctx ends.
func runDev(ctx context.Context, stdout, stderr io.Writer) error {
	var dc DevConfig
	if err := envconfig.Process("", &dc); err != nil {
		return err
	}
	if _, _, err := net.SplitHostPort(dc.DevAddr); err != nil {
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
		m.Model = demo.New()
		c.OpenAIAPIKey, c.OpenAIModel, c.OpenAISmallModel = "demo", "demo", "demo"
	}

	emu, err := emulator.NewServer(emulator.Config{Addr: dc.DevAddr, Banner: banner})
	if err != nil {
		return fmt.Errorf("DEV_ADDR: start the playground on %s: %w", dc.DevAddr, err)
	}
	defer emu.Close()
	ec := emu.Config()
	c.SlackBotToken, c.SlackAppToken, c.SlackAPIURL = ec.BotToken, ec.AppToken, emu.URL()
	c.DatabaseURL = "" // the playground always uses its own embedded store
	c.DataDir = filepath.Join(c.DataDir, "dev")
	if err := c.validate(); err != nil {
		return err
	}

	page := emu.PageURL()
	m.Logger = newLogger(stderr, c.LogLevel, c.LogFormat)
	fmt.Fprintf(stdout, "threadwright dev: open %s\n", page)
	if offline {
		fmt.Fprintln(stdout, "threadwright dev: "+demoBanner)
		m.Logger.Warn("offline demo model: answers are canned, not from an AI model", "hint", "set OPENAI_API_KEY or OPENAI_BASE_URL")
	}
	err = m.Run(ctx)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}
