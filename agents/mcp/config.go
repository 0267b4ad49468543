package mcp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Defaults of Config and ServerConfig.
const (
	// DefaultTimeout bounds each tool call when ServerConfig.Timeout is zero.
	DefaultTimeout = 30 * time.Second
	// DefaultRetryDelay is the first wait before reconnecting to a server that could
	// not be reached; it doubles after each failed attempt.
	DefaultRetryDelay = time.Second
	// DefaultMaxRetryDelay caps the wait between reconnection attempts.
	DefaultMaxRetryDelay = time.Minute
)

// maxPrefix leaves room for "__" and a tool name within OpenAI's 64 characters.
const maxPrefix = 32

// Config lists the MCP servers whose tools the agent may call. LoadConfig reads it
// from a YAML file:
//
//	servers:
//	  - name: files                  # required, unique; names the server in errors and logs
//	    command: ["/usr/bin/mcp-files", "--root", "/data"]   # stdio: program and arguments
//	    env: {FILES_TOKEN: "${FILES_TOKEN}"}                 # stdio: extra environment
//	    dir: /data                   # stdio: working directory (optional)
//	    timeout: 30s                 # each tool call (default 30s)
//	    connect_timeout: 2m          # starting it and the handshake (default: timeout)
//	    prefix: files                # tool names are prefix__tool (default: the name)
//	  - name: crm
//	    url: https://crm.example.com/mcp                     # streamable HTTP endpoint
//	    headers: {Authorization: "Bearer ${CRM_TOKEN}"}       # HTTP: sent with every request
//	    timeout: 20s
//	    required: true               # a failure at start-up stops the bot
//	    trusted: true                # its tools' hints and output are trusted (docs/tools.md, "Tool policy")
//	retry_delay: 1s                  # first wait before reconnecting (doubles; default 1s)
//	max_retry_delay: 1m              # longest wait between reconnections (default 1m)
//
// "${NAME}" in env and header values is replaced by the bot's environment variable
// NAME, so secrets need not be written in the file.
type Config struct {
	// Servers are the MCP servers, each with either Command or URL.
	Servers []ServerConfig `yaml:"servers"`
	// RetryDelay is the first wait before reconnecting to a server that failed
	// (default DefaultRetryDelay); it doubles after each failed attempt, up to
	// MaxRetryDelay (default DefaultMaxRetryDelay).
	RetryDelay    time.Duration `yaml:"retry_delay"`
	MaxRetryDelay time.Duration `yaml:"max_retry_delay"`
}

// ServerConfig is one MCP server: a program spoken to over stdio (Command) or a
// streamable HTTP endpoint (URL), per the MCP specification's transports
// (modelcontextprotocol.io/specification, "Transports").
type ServerConfig struct {
	// Name identifies the server in errors, logs and the tools' category "MCP: Name".
	Name string `yaml:"name"`
	// Command is the program and its arguments of a stdio server. The program gets
	// the bot's HOME, LANG, LC_ALL, LOGNAME, PATH, SHELL, TERM, TMPDIR, TZ and USER
	// (not its secrets) plus Env, and runs in Dir (default: the bot's directory).
	Command []string          `yaml:"command"`
	Env     map[string]string `yaml:"env"`
	Dir     string            `yaml:"dir"`
	// URL is the endpoint of a streamable HTTP server (http or https); Headers are
	// sent with each request, e.g. Authorization. Header values are never logged.
	URL     string            `yaml:"url"`
	Headers map[string]string `yaml:"headers"`
	// Timeout bounds each tool call (default DefaultTimeout).
	Timeout time.Duration `yaml:"timeout"`
	// ConnectTimeout bounds starting the server and the MCP handshake, at start-up
	// (with listing the tools) and when a call reconnects (default: Timeout). Raise
	// it for a program that is slow to start, such as one run with npx.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// Prefix starts the server's tool names, "Prefix__tool": 1 to 32 characters of
	// a-z, A-Z, 0-9, "_" and "-", without "__" and not ending with "_". Default: Name
	// with other characters replaced by "_", runs of "_" made one, none at the ends.
	Prefix string `yaml:"prefix"`
	// Required makes Connect fail when the server cannot be started; otherwise the
	// failure is logged and the server's tools are left out.
	Required bool `yaml:"required"`
	// Trusted says the operator trusts the server (docs/tools.md, "Tool policy"): its tools
	// without a destructiveHint run without confirmation (until untrusted content
	// entered the turn), and its output is internal unless a tool has openWorldHint.
	// Untrusted (the default), only its readOnlyHint tools run without confirmation,
	// and all its output is untrusted content.
	Trusted bool `yaml:"trusted"`
}

// LogValue describes the server for logs without its headers' and environment's
// values, which may be secrets.
func (c ServerConfig) LogValue() slog.Value {
	attrs := []slog.Attr{slog.String("name", c.Name)}
	if c.URL != "" {
		attrs = append(attrs, slog.String("url", redactURL(c.URL)))
		if len(c.Headers) > 0 {
			attrs = append(attrs, slog.Any("headers", sortedKeys(c.Headers)))
		}
	} else if len(c.Command) > 0 {
		// The program only: arguments may hold secrets (they should be in env).
		attrs = append(attrs, slog.String("program", c.Command[0]), slog.Int("args", len(c.Command)-1))
		if len(c.Env) > 0 {
			attrs = append(attrs, slog.Any("env", sortedKeys(c.Env)))
		}
	}
	return slog.GroupValue(attrs...)
}

// ErrConfig is wrapped by the errors of LoadConfig and of Connect's validation of
// its Config; test with errors.Is.
var ErrConfig = errors.New("mcp: invalid configuration")

// configError is an ErrConfig with its own message (without ErrConfig's text).
type configError struct{ err error }

func configErrorf(format string, args ...any) error {
	return &configError{fmt.Errorf(format, args...)}
}

func (e *configError) Error() string { return e.err.Error() }

func (e *configError) Unwrap() []error { return []error{ErrConfig, e.err} }

// LoadConfig reads and checks the YAML configuration file at path (see Config),
// filling in defaults. Unknown fields are errors. Errors name the file and the
// field: "mcp config /etc/tw/mcp.yaml: servers[1] (crm): url: ...".
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("mcp config: %w", err)
	}
	cfg, err := parseConfig(data, os.LookupEnv)
	if err != nil {
		return Config{}, fmt.Errorf("mcp config %s: %w", path, err)
	}
	return cfg, nil
}

// parseConfig decodes data strictly, expands "${NAME}" with lookup and validates.
func parseConfig(data []byte, lookup func(string) (string, bool)) (Config, error) {
	var cfg Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) {
		var te *yaml.TypeError
		if !errors.As(err, &te) {
			return Config{}, configErrorf("%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		msgs := slices.Clone(te.Errors)
		for i, m := range msgs {
			// A value in the wrong place may be a secret ("headers: Bearer …").
			msgs[i] = yamlValue.ReplaceAllString(m, "a value")
			switch {
			case strings.Contains(m, "time.Duration"):
				msgs[i] += " (write a duration such as 30s or 2m)"
			case strings.HasSuffix(m, "into []string"):
				msgs[i] += ` (write a list such as ["/usr/bin/mcp-files", "--root", "/data"])`
			}
		}
		return Config{}, configErrorf("%s", strings.Join(msgs, "; "))
	}
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		var err error
		if s.Env, err = expandAll(s.Env, "env", lookup); err == nil {
			s.Headers, err = expandAll(s.Headers, "headers", lookup)
		}
		if err != nil {
			return Config{}, configErrorf("%s: %w", s.where(i), err)
		}
	}
	if err := cfg.validate(); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

var (
	envRef      = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	yamlValue   = regexp.MustCompile("!!\\w+ `[^`]*`")
	toolChars   = regexp.MustCompile(`[^a-zA-Z0-9_-]`)
	prefixRe    = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,32}$`)
	underscores = regexp.MustCompile(`_+`)
	headerName  = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	envName     = regexp.MustCompile(`^[^=\x00]+$`)
)

// expandAll replaces "${NAME}" in m's values by the environment variable NAME; an
// unset variable is an error naming the field and the variable, never the value.
func expandAll(m map[string]string, field string, lookup func(string) (string, bool)) (map[string]string, error) {
	var err error
	for k, v := range m {
		m[k] = envRef.ReplaceAllStringFunc(v, func(ref string) string {
			name := envRef.FindStringSubmatch(ref)[1]
			val, ok := lookup(name)
			if !ok && err == nil {
				err = fmt.Errorf("%s.%s: environment variable %s is not set", field, k, name)
			}
			return val
		})
		if err != nil {
			return nil, err
		}
	}
	return m, nil
}

// validate checks cfg and fills in defaults; errors wrap ErrConfig.
func (cfg *Config) validate() error {
	if cfg.RetryDelay < 0 || cfg.MaxRetryDelay < 0 {
		return configErrorf("retry_delay and max_retry_delay must not be negative")
	}
	if cfg.RetryDelay == 0 {
		cfg.RetryDelay = DefaultRetryDelay
	}
	if cfg.MaxRetryDelay == 0 {
		cfg.MaxRetryDelay = max(DefaultMaxRetryDelay, cfg.RetryDelay)
	}
	if cfg.MaxRetryDelay < cfg.RetryDelay {
		return configErrorf("max_retry_delay %s is shorter than retry_delay %s", cfg.MaxRetryDelay, cfg.RetryDelay)
	}
	names := make(map[string]int)
	prefixes := make(map[string]int)
	for i := range cfg.Servers {
		s := &cfg.Servers[i]
		if err := s.validate(); err != nil {
			return configErrorf("%s: %w", s.where(i), err)
		}
		if j, dup := names[s.Name]; dup {
			return configErrorf("%s: name %q is also used by servers[%d]", s.where(i), s.Name, j)
		}
		names[s.Name] = i
		if j, dup := prefixes[s.Prefix]; dup {
			return configErrorf("%s: prefix %q is also used by servers[%d]; set a distinct prefix", s.where(i), s.Prefix, j)
		}
		prefixes[s.Prefix] = i
	}
	return nil
}

func (s *ServerConfig) where(i int) string {
	if s.Name == "" {
		return fmt.Sprintf("servers[%d]", i)
	}
	return fmt.Sprintf("servers[%d] (%s)", i, s.Name)
}

func (s *ServerConfig) validate() error {
	if strings.TrimSpace(s.Name) == "" {
		return errors.New("name: required")
	}
	if strings.ContainsFunc(s.Name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return errors.New("name: must not contain control characters")
	}
	switch {
	case len(s.Command) > 0 && s.URL != "":
		return errors.New("command and url: set one, not both")
	case len(s.Command) > 0:
		if strings.TrimSpace(s.Command[0]) == "" {
			return errors.New("command: the first element must name the program")
		}
		if len(s.Headers) > 0 {
			return errors.New("headers: only for a server with url")
		}
		for k := range s.Env {
			if !envName.MatchString(k) {
				return fmt.Errorf("env: invalid variable name %q", k)
			}
		}
	case s.URL != "":
		u, err := url.Parse(s.URL)
		if err != nil {
			return errors.New("url: not a valid URL")
		}
		if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return fmt.Errorf("url: %q must be an absolute http or https URL", redactURL(s.URL))
		}
		if len(s.Env) > 0 || s.Dir != "" {
			return errors.New("env and dir: only for a server with command")
		}
		for k, v := range s.Headers {
			if !headerName.MatchString(k) {
				return fmt.Errorf("headers: invalid header name %q", k)
			}
			if strings.ContainsAny(v, "\r\n\x00") {
				return fmt.Errorf("headers.%s: the value must not contain line breaks", k)
			}
		}
	default:
		return errors.New("command or url: one is required (a stdio program or a streamable HTTP endpoint)")
	}
	if s.Timeout < 0 || s.ConnectTimeout < 0 {
		return errors.New("timeout and connect_timeout: must not be negative")
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.ConnectTimeout == 0 {
		s.ConnectTimeout = s.Timeout
	}
	if s.Prefix == "" {
		// Runs of "_" become one, and none ends the prefix, as checked below.
		s.Prefix = strings.Trim(underscores.ReplaceAllString(toolChars.ReplaceAllString(s.Name, "_"), "_"), "_")
		if len(s.Prefix) > maxPrefix {
			s.Prefix = strings.TrimRight(s.Prefix[:maxPrefix], "_")
		}
		if s.Prefix == "" {
			return fmt.Errorf("prefix: the name %q gives none; set one", s.Name)
		}
	} else if !prefixRe.MatchString(s.Prefix) {
		return fmt.Errorf("prefix: %q must be 1 to %d characters of a-z, A-Z, 0-9, _ and -", s.Prefix, maxPrefix)
	}
	// A TOOL_POLICY glob "prefix__*" must match this server's tools only: no prefix
	// holds "__" or ends with "_" ("crm_" would give "crm___x", which "crm__*" matches).
	if strings.Contains(s.Prefix, "__") || strings.HasSuffix(s.Prefix, "_") {
		return fmt.Errorf("prefix: %q must not contain \"__\" or end with \"_\" (tool names are prefix__tool)", s.Prefix)
	}
	return nil
}

// redactURL drops a URL's user information and query, which may carry secrets.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	if u.RawQuery != "" {
		u.RawQuery = "…"
	}
	return u.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
