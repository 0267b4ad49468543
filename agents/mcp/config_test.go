package mcp_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents/mcp"
)

// writeConfig writes a configuration file and returns its path.
func writeConfig(t *testing.T, yaml string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mcp.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadConfig(t *testing.T) {
	t.Setenv("TW_TEST_CRM_TOKEN", "tok-123")
	path := writeConfig(t, `
servers:
  - name: files
    command: ["/usr/bin/mcp-files", "--root", "/data"]
    env: {FILES_TOKEN: env-secret-42}
    timeout: 45s
    prefix: fs
  - name: crm.prod
    url: https://crm.example.com/mcp
    headers: {Authorization: "Bearer ${TW_TEST_CRM_TOKEN}"}
    connect_timeout: 2m
    required: true
    trusted: true
retry_delay: 500ms
`)
	cfg, err := mcp.LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	want := mcp.Config{
		Servers: []mcp.ServerConfig{
			{
				Name: "files", Command: []string{"/usr/bin/mcp-files", "--root", "/data"},
				Env: map[string]string{"FILES_TOKEN": "env-secret-42"}, Timeout: 45 * time.Second, ConnectTimeout: 45 * time.Second, Prefix: "fs",
			},
			{
				Name: "crm.prod", URL: "https://crm.example.com/mcp", Headers: map[string]string{"Authorization": "Bearer tok-123"},
				Timeout: mcp.DefaultTimeout, ConnectTimeout: 2 * time.Minute, Prefix: "crm_prod", Required: true, Trusted: true,
			},
		},
		RetryDelay:    500 * time.Millisecond,
		MaxRetryDelay: mcp.DefaultMaxRetryDelay,
	}
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("LoadConfig =\n%+v\nwant\n%+v", cfg, want)
	}

	t.Run("Empty", func(t *testing.T) {
		cfg, err := mcp.LoadConfig(writeConfig(t, "# no servers yet\n"))
		if err != nil || len(cfg.Servers) != 0 || cfg.RetryDelay != mcp.DefaultRetryDelay {
			t.Errorf("LoadConfig = %+v, %v", cfg, err)
		}
	})

	t.Run("LogValueHidesSecrets", func(t *testing.T) {
		var b strings.Builder
		slog.New(slog.NewTextHandler(&b, nil)).Info("x", "files", cfg.Servers[0], "crm", cfg.Servers[1])
		out := b.String()
		if strings.Contains(out, "tok-123") || strings.Contains(out, "env-secret-42") {
			t.Errorf("log shows a secret: %s", out)
		}
		for _, s := range []string{"crm.example.com", "Authorization", "FILES_TOKEN", "/usr/bin/mcp-files"} {
			if !strings.Contains(out, s) {
				t.Errorf("log lacks %q: %s", s, out)
			}
		}
	})
}

func TestLoadConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		want       string // in the error message
	}{
		{"UnknownField", "servers:\n  - name: a\n    comand: [x]\n", "field comand not found"},
		{"Syntax", "servers: [\n", "line"},
		{"NoName", "servers:\n  - command: [x]\n", "servers[0]: name: required"},
		{"NoTransport", "servers:\n  - name: a\n", "servers[0] (a): command or url: one is required"},
		{"Both", "servers:\n  - name: a\n    command: [x]\n    url: http://h/mcp\n", "command and url: set one, not both"},
		{"EmptyProgram", "servers:\n  - name: a\n    command: [\"\"]\n", "command: the first element"},
		{"BadScheme", "servers:\n  - name: a\n    url: ftp://h/mcp\n", "url: \"ftp://h/mcp\" must be an absolute http or https URL"},
		{"RelativeURL", "servers:\n  - name: a\n    url: /mcp\n", "must be an absolute http or https URL"},
		{"HeadersOnStdio", "servers:\n  - name: a\n    command: [x]\n    headers: {A: b}\n", "headers: only for a server with url"},
		{"EnvOnHTTP", "servers:\n  - name: a\n    url: http://h/\n    env: {A: b}\n", "env and dir: only for a server with command"},
		{"BadHeaderName", "servers:\n  - name: a\n    url: http://h/\n    headers: {\"Bad Header\": b}\n", "invalid header name"},
		{"BadTimeout", "servers:\n  - name: a\n    command: [x]\n    timeout: soon\n", "line 4: cannot unmarshal a value into time.Duration (write a duration such as 30s or 2m)"},
		{"CommandString", "servers:\n  - name: a\n    command: /usr/bin/x --flag\n", "line 3: cannot unmarshal a value into []string (write a list such as"},
		{"NegativeTimeout", "servers:\n  - name: a\n    command: [x]\n    timeout: -1s\n", "timeout and connect_timeout: must not be negative"},
		{"BadPrefix", "servers:\n  - name: a\n    command: [x]\n    prefix: \"a.b\"\n", "prefix: \"a.b\" must be"},
		{"DuplicateName", "servers:\n  - {name: a, command: [x]}\n  - {name: a, command: [y], prefix: b}\n", "servers[1] (a): name \"a\" is also used by servers[0]"},
		{"DuplicatePrefix", "servers:\n  - {name: a.b, command: [x]}\n  - {name: a_b, command: [y]}\n", "prefix \"a_b\" is also used by servers[0]"},
		{"UnsetVariable", "servers:\n  - name: a\n    url: http://h/\n    headers: {Authorization: \"Bearer ${TW_TEST_UNSET_VAR}\"}\n", "headers.Authorization: environment variable TW_TEST_UNSET_VAR is not set"},
		{"RetryDelays", "retry_delay: 1m\nmax_retry_delay: 1s\n", "max_retry_delay 1s is shorter than retry_delay 1m0s"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeConfig(t, tt.yaml)
			_, err := mcp.LoadConfig(path)
			if !errors.Is(err, mcp.ErrConfig) {
				t.Fatalf("err = %v, want ErrConfig", err)
			}
			if !strings.HasPrefix(err.Error(), "mcp config "+path+": ") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %q, want it to name the file and contain %q", err, tt.want)
			}
		})
	}

	t.Run("Missing", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "none.yaml")
		_, err := mcp.LoadConfig(path)
		if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), path) {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("SecretNotInError", func(t *testing.T) {
		t.Setenv("TW_TEST_SECRET", "hunter2")
		_, err := mcp.LoadConfig(writeConfig(t, "servers:\n  - name: a\n    url: \"https://user:hunter2@h/mcp?key=hunter2\"\n    headers: {\"X Key\": hunter2}\n"))
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("err = %v", err)
		}
		_, err = mcp.LoadConfig(writeConfig(t, "servers:\n  - name: a\n    url: https://h/mcp\n    headers: \"Bearer hunter2\"\n"))
		if err == nil || strings.Contains(err.Error(), "hunter2") || !strings.Contains(err.Error(), "line 4") {
			t.Errorf("err = %v", err)
		}
	})
}
