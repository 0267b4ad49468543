package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/threadwright/threadwright/cmd/threadwright/internal/configdoc"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md from the settings' desc tags, and docs/playground.png from the browser test")

// configReferenceIntro opens docs/configuration.md, under its title.
const configReferenceIntro = `
All settings come from the environment; this page lists every one, with its default and
what it does, by subject. A missing or malformed setting stops start-up with one line
that names the variable and what it expects, for example
` + "`threadwright: SLACK_APP_TOKEN: expected an app-level token with connections:write, starting with xapp-`" + `.
` + "`threadwright help`" + ` prints the same descriptions.

Only ` + "`SLACK_BOT_TOKEN`" + ` and ` + "`SLACK_APP_TOKEN`" + ` are required, and ` + "`OPENAI_API_KEY`" + ` for
OpenAI itself; ` + "`threadwright dev`" + ` needs none of them
([docs/playground.md](playground.md)). The OpenTelemetry SDK reads more ` + "`OTEL_*`" + `
variables of its own ([Traces](operations.md#traces)).
`

// configReference is docs/configuration.md as the settings' tags say it.
func configReference() ([]byte, error) {
	settings, err := configdoc.Settings(&Config{}, &DevConfig{}, &usageConfig{})
	if err != nil {
		return nil, err
	}
	return configdoc.Markdown("Configuration", configReferenceIntro, settings), nil
}

// TestConfigReference fails when docs/configuration.md is not what the settings' desc
// tags say; go generate ./cmd/threadwright (or this test with -update) rewrites it.
func TestConfigReference(t *testing.T) {
	got, err := configReference()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "configuration.md")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go generate ./cmd/threadwright)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("docs/configuration.md is not what the settings' desc tags say: run go generate ./cmd/threadwright and commit it")
	}
}
