package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/threadwright/threadwright/store/storetest"
)

// setEnv sets a valid configuration, then the overrides ("" unsets).
func setEnv(t *testing.T, overrides map[string]string) {
	t.Helper()
	base := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1", "OPENAI_API_KEY": "sk-1",
		"SLACK_API_URL": "", "OPENAI_BASE_URL": "", "OPENAI_MODEL": "", "OPENAI_SMALL_MODEL": "",
		"DATABASE_URL": "", "DATA_DIR": "", "LOG_LEVEL": "", "LOG_FORMAT": "", "HTTP_ADDR": "",
		"MAX_STEPS": "", "TURN_TIMEOUT": "", "SCOPE_ALLOW": "", "SCOPE_DENY": "", "SCOPE_DESCRIPTION": "",
		"MAX_CONCURRENT_TURNS": "", "RETENTION_DAYS": "",
		"BUDGET_TOKENS_PER_USER_DAY": "", "BUDGET_TOKENS_PER_CHANNEL_DAY": "", "ADMINS": "",
		"MODEL_TIMEOUT": "", "MODEL_MAX_RETRIES": "", "MODEL_RETRY_BUDGET": "", "MODEL_MAX_CONCURRENT": "",
		"SOCKET_CONNECTIONS": "",
	}
	for k, v := range overrides {
		base[k] = v
	}
	for k, v := range base {
		t.Setenv(k, v)
		if v == "" {
			os.Unsetenv(k)
		}
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	setEnv(t, nil)
	var c Config
	if err := LoadConfig(&c); err != nil {
		t.Fatal(err)
	}
	if c.SlackAPIURL != "https://slack.com/api/" || c.DataDir != "./data" || c.HTTPAddr != "127.0.0.1:8080" ||
		c.OpenAIBaseURL != "https://api.openai.com/v1" || c.OpenAISmallModel != c.OpenAIModel || c.MaxSteps != 8 {
		t.Fatalf("defaults: %+v", c)
	}
	if c.ModelMaxRetries != 5 || c.ModelRetryBudget != time.Minute || c.ModelMaxConcurrent != 500 {
		t.Fatalf("model client defaults: retries %d, budget %s, concurrent %d", c.ModelMaxRetries, c.ModelRetryBudget, c.ModelMaxConcurrent)
	}
	if c.MaxConcurrentTurns != 2000 || c.LeaseTTL != 10*time.Second || c.DatabaseMaxConns != 40 {
		t.Fatalf("turn defaults: concurrency %d, lease TTL %s, database connections %d", c.MaxConcurrentTurns, c.LeaseTTL, c.DatabaseMaxConns)
	}
	if c.SocketConnections != 2 {
		t.Fatalf("socket mode connections: %d, want 2", c.SocketConnections)
	}
}

func TestLoadConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"MissingBotToken", map[string]string{"SLACK_BOT_TOKEN": ""}, "SLACK_BOT_TOKEN: expected the bot token, starting with xoxb-"},
		{"WrongAppToken", map[string]string{"SLACK_APP_TOKEN": "xoxb-2"}, "SLACK_APP_TOKEN: expected an app-level token"},
		{"MissingKey", map[string]string{"OPENAI_API_KEY": ""}, "OPENAI_API_KEY: expected an API key"},
		{"BadInt", map[string]string{"MAX_STEPS": "many"}, `MAX_STEPS: expected a whole number, got "many"`},
		{"BadDuration", map[string]string{"TURN_TIMEOUT": "5 minutes"}, `TURN_TIMEOUT: expected a duration such as 30s or 5m, got "5 minutes"`},
		{"NegativeBound", map[string]string{"MAX_CONCURRENT_TURNS": "0"}, "MAX_CONCURRENT_TURNS: expected a whole number above 0"},
		{"NegativeRetries", map[string]string{"MODEL_MAX_RETRIES": "-1"}, "MODEL_MAX_RETRIES: expected 0 or a whole number of retries"},
		{"BadRetries", map[string]string{"MODEL_MAX_RETRIES": "five"}, `MODEL_MAX_RETRIES: expected a whole number, got "five"`},
		{"NoRetryBudget", map[string]string{"MODEL_RETRY_BUDGET": "0s"}, "MODEL_RETRY_BUDGET: expected a positive duration"},
		{"BadRetryBudget", map[string]string{"MODEL_RETRY_BUDGET": "60"}, `MODEL_RETRY_BUDGET: expected a duration such as 30s or 5m, got "60"`},
		{"NoModelConcurrency", map[string]string{"MODEL_MAX_CONCURRENT": "0"}, "MODEL_MAX_CONCURRENT: expected a whole number above 0"},
		{"BadDatabaseURL", map[string]string{"DATABASE_URL": "mysql://x"}, "DATABASE_URL: expected a postgres:// URL"},
		{"BadLogLevel", map[string]string{"LOG_LEVEL": "loud"}, "LOG_LEVEL: expected debug, info, warn or error"},
		{"NoSocketConnections", map[string]string{"SOCKET_CONNECTIONS": "0"}, "SOCKET_CONNECTIONS: expected a whole number from 1 to 10"},
		{"TooManySocketConnections", map[string]string{"SOCKET_CONNECTIONS": "11"}, "SOCKET_CONNECTIONS: expected a whole number from 1 to 10 (Slack allows an app 10 socket mode connections, across all replicas)"},
		{"BadAPIURL", map[string]string{"SLACK_API_URL": "slack.com/api"}, "SLACK_API_URL: expected an http(s) URL ending in /"},
		{"BadAddr", map[string]string{"HTTP_ADDR": "8080"}, "HTTP_ADDR: expected host:port"},
		{"BadPattern", map[string]string{"SCOPE_DENY": "(unclosed"}, "SCOPE_DENY: expected comma-separated regular expressions"},
		{"BadTraceEndpoint", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318"}, "OTEL_EXPORTER_OTLP_ENDPOINT: expected an http(s) URL"},
		{"BadTraceContent", map[string]string{"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "maybe"}, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: expected true, false"},
		{"NegativeBudget", map[string]string{"BUDGET_TOKENS_PER_USER_DAY": "-5"}, "BUDGET_TOKENS_PER_USER_DAY: expected 0 or a whole number of tokens"},
		{"BadBudget", map[string]string{"BUDGET_TOKENS_PER_CHANNEL_DAY": "1M"}, `BUDGET_TOKENS_PER_CHANNEL_DAY: expected a whole number, got "1M"`},
		{"BadDoubleTexting", map[string]string{"DOUBLE_TEXTING": "debounce"}, "DOUBLE_TEXTING: expected interrupt, queue or merge"},
		{"BadDoubleTextingChannel", map[string]string{"DOUBLE_TEXTING_CHANNELS": "C123:burst"}, "DOUBLE_TEXTING_CHANNELS: channel C123: unknown double-texting policy"},
		{"NoDoubleTextingWindow", map[string]string{"DOUBLE_TEXTING_WINDOW": "0s"}, "DOUBLE_TEXTING_WINDOW: expected a positive duration"},
		{"BadAdmins", map[string]string{"ADMINS": "<@U0ADMIN>"}, "ADMINS: expected comma-separated Slack user ids"},
		{"WebhookWithoutSecret", map[string]string{"WEBHOOK_URLS": "https://hooks.example.com/tw", "WEBHOOK_SECRET": ""}, "WEBHOOK_SECRET: expected the secret webhooks are signed with (required when a WEBHOOK_URLS entry has no |secret of its own)"},
		{"WebhookEntryWithoutSecret", map[string]string{"WEBHOOK_URLS": "https://a.example.com/tw|own-secret,https://b.example.com/tw", "WEBHOOK_SECRET": ""}, "WEBHOOK_SECRET: expected"},
		{"BadWebhookURLWithSecret", map[string]string{"WEBHOOK_URLS": "hooks.example.com|own-secret", "WEBHOOK_SECRET": "s"}, "WEBHOOK_URLS: expected comma-separated http(s) URLs"},
		{"BadWebhookURL", map[string]string{"WEBHOOK_URLS": "hooks.example.com", "WEBHOOK_SECRET": "s"}, "WEBHOOK_URLS: expected comma-separated http(s) URLs"},
		{"BadWebhookAllowHost", map[string]string{"WEBHOOK_URLS": "https://hooks.example.com/tw", "WEBHOOK_SECRET": "s", "WEBHOOK_ALLOW_HOSTS": "10.0.0.0/99"}, "WEBHOOK_ALLOW_HOSTS:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.env)
			var c Config
			err := LoadConfig(&c)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q, want one line starting %q", err, tt.want)
			}
		})
	}
	t.Run("LocalModelNeedsNoKey", func(t *testing.T) {
		setEnv(t, map[string]string{"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "http://localhost:11434/v1"})
		var c Config
		if err := LoadConfig(&c); err != nil {
			t.Fatal(err)
		}
	})
}

func TestClientConfig(t *testing.T) {
	for _, tt := range []struct {
		retries     string
		wantRetries int
	}{{"", 5}, {"2", 2}, {"0", -1}} {
		t.Run("MODEL_MAX_RETRIES="+tt.retries, func(t *testing.T) {
			setEnv(t, map[string]string{"MODEL_TIMEOUT": "90s", "MODEL_MAX_RETRIES": tt.retries, "MODEL_RETRY_BUDGET": "2m", "MODEL_MAX_CONCURRENT": "16"})
			var c Config
			if err := LoadConfig(&c); err != nil {
				t.Fatal(err)
			}
			got := c.clientConfig(slog.New(slog.DiscardHandler))
			if got.BaseURL != "https://api.openai.com/v1" || got.APIKey != "sk-1" || got.Timeout != 90*time.Second ||
				got.MaxRetries != tt.wantRetries || got.MaxElapsed != 2*time.Minute || got.MaxConcurrent != 16 || got.Logger == nil {
				t.Errorf("clientConfig() = %+v (MaxRetries %d, MaxElapsed %s, MaxConcurrent %d)", got, got.MaxRetries, got.MaxElapsed, got.MaxConcurrent)
			}
		})
	}
}

func TestLoadConfigSecretsNotInErrors(t *testing.T) {
	setEnv(t, map[string]string{"DATABASE_URL": "mysql://user:hunter2@db/x", "MAX_STEPS": "1"})
	var c Config
	if err := LoadConfig(&c); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("error %q", err)
	}
}

func runCLI(t testing.TB, args ...string) (string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, &out, &errOut)
	return out.String() + errOut.String(), err
}

func TestCommands(t *testing.T) {
	t.Run("Manifest", func(t *testing.T) {
		out, err := runCLI(t, "manifest")
		if err != nil || !strings.Contains(out, "socket_mode_enabled: true") || !strings.Contains(out, "command: /threadwright") {
			t.Fatalf("%v\n%s", err, out)
		}
	})
	t.Run("Version", func(t *testing.T) {
		out, err := runCLI(t, "version")
		if err != nil || !strings.HasPrefix(out, "threadwright ") {
			t.Fatalf("%v %q", err, out)
		}
	})
	t.Run("Help", func(t *testing.T) {
		out, err := runCLI(t, "help")
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_API_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL",
			"OPENAI_SMALL_MODEL", "DATABASE_URL", "DATA_DIR", "SCOPE_DESCRIPTION", "LOG_LEVEL", "HTTP_ADDR", "migrate", "manifest",
			"WORKFLOWS_DIR", "APPROVER_USER_IDS", "HISTORY_TOKENS", "DEV_ADDR", "dev", "workflows",
			"MODEL_MAX_RETRIES", "MODEL_RETRY_BUDGET", "MODEL_MAX_CONCURRENT"} {
			if !strings.Contains(out, v) {
				t.Errorf("help lacks %s", v)
			}
		}
	})
	t.Run("Unknown", func(t *testing.T) {
		if _, err := runCLI(t, "frobnicate"); err == nil || !strings.Contains(err.Error(), "frobnicate") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("RunWithoutConfig", func(t *testing.T) {
		setEnv(t, map[string]string{"SLACK_BOT_TOKEN": ""})
		if _, err := runCLI(t, "run"); err == nil || !strings.HasPrefix(err.Error(), "SLACK_BOT_TOKEN") {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("MigrateSQLite", func(t *testing.T) {
		dir := t.TempDir()
		setEnv(t, map[string]string{"DATA_DIR": dir, "SLACK_BOT_TOKEN": ""}) // migrate needs no Slack settings
		out, err := runCLI(t, "migrate")
		if err != nil || !strings.Contains(out, "migrations applied") {
			t.Fatalf("%v\n%s", err, out)
		}
		if _, err := os.Stat(filepath.Join(dir, "threadwright.db")); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("MigratePostgres", func(t *testing.T) {
		// A schema of its own: the shared database's default one may hold another
		// version's migrations.
		dsn := storetest.PostgresDSN(t)
		setEnv(t, map[string]string{"DATABASE_URL": dsn})
		if out, err := runCLI(t, "migrate"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}

// TestHelpFitsInAHundredColumns: no line of the program's help, nor of any command's
// -h, is longer than helpWidth characters.
func TestHelpFitsInAHundredColumns(t *testing.T) {
	setEnv(t, map[string]string{"DATA_DIR": t.TempDir()})
	for _, args := range [][]string{{"help"}, {"ingest", "-h"}, {"feedback", "-h"}, {"usage", "-h"}, {"workflows", "-h"}, {"eval", "-h"}} {
		out, _ := runCLI(t, args...)
		if len(strings.Split(out, "\n")) < 3 {
			t.Errorf("%s printed no help:\n%s", args, out)
		}
		for i, line := range strings.Split(out, "\n") {
			if n := utf8.RuneCountInString(line); n > helpWidth {
				t.Errorf("%s, line %d: %d characters, over %d: %q", args, i+1, n, helpWidth, line)
			}
		}
	}
}
