package main

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation/workflow"
)

// ModelProfile is one named model of MODEL_PROFILES: an OpenAI-compatible endpoint
// and model that a workflow artifact (its model: field) or editor pass runs on, for
// example a final enhancement pass by a second provider.
type ModelProfile struct {
	// BaseURL is the endpoint (default OPENAI_BASE_URL).
	BaseURL string `yaml:"base_url"`
	// Model is the model name (required).
	Model string `yaml:"model"`
	// APIKey is the endpoint's key; write "${NAME}" to read it from the environment
	// variable NAME, so the file holds no secret (default: OPENAI_API_KEY when
	// BaseURL is unset).
	APIKey string `yaml:"api_key"`
	// Timeout bounds one call (default MODEL_TIMEOUT).
	Timeout time.Duration `yaml:"timeout"`
}

var (
	profileName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)
	envRef      = regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$`)
)

// LoadProfiles reads MODEL_PROFILES, a YAML mapping from profile name to profile:
//
//	enhance:
//	  base_url: https://api.example.com/v1
//	  model: big-model-2
//	  api_key: ${ENHANCE_API_KEY}
//	  timeout: 120s
//
// Unknown fields are errors; an "${NAME}" key whose variable is unset is an error
// (naming the variable, never a value). Defaults come from c (OPENAI_BASE_URL,
// OPENAI_API_KEY, MODEL_TIMEOUT). An empty path returns no profiles.
func LoadProfiles(path string, c *Config) (map[string]ModelProfile, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("MODEL_PROFILES: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var raw map[string]ModelProfile
	if err := dec.Decode(&raw); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("MODEL_PROFILES %s: %w", path, err)
	}
	out := make(map[string]ModelProfile, len(raw))
	for _, name := range slices.Sorted(maps.Keys(raw)) {
		p := raw[name]
		bad := func(format string, args ...any) error {
			return fmt.Errorf("MODEL_PROFILES %s: profile %q: %s", path, name, fmt.Sprintf(format, args...))
		}
		switch {
		case !profileName.MatchString(name):
			return nil, bad("a name is lower-case letters, digits, - and _")
		case p.Model == "":
			return nil, bad("model is required")
		case p.BaseURL != "" && !isHTTPURL(p.BaseURL):
			return nil, bad("base_url: expected an http(s) URL")
		case p.Timeout < 0:
			return nil, bad("timeout: expected a positive duration")
		}
		if m := envRef.FindStringSubmatch(p.APIKey); m != nil {
			v, ok := os.LookupEnv(m[1])
			if !ok || v == "" {
				return nil, bad("api_key: the environment variable %s is not set", m[1])
			}
			p.APIKey = v
		}
		if p.BaseURL == "" {
			p.BaseURL = c.OpenAIBaseURL
			if p.APIKey == "" {
				p.APIKey = c.OpenAIAPIKey
			}
		}
		if p.Timeout == 0 {
			p.Timeout = c.ModelTimeout
		}
		out[name] = p
	}
	return out, nil
}

// modelProfiles makes the agents' profiles on base, the main model's client
// configuration (see Config.clientConfig): each profile's client has base's retry and
// concurrency settings and its own endpoint, key and timeout. Profiles with the same
// endpoint, key and timeout share one client, and so its bound on calls in flight;
// baseClient, when not nil, is base's client, shared with profiles that have base's.
func modelProfiles(profiles map[string]ModelProfile, base agents.ClientConfig, baseClient *agents.Client) map[string]agents.Profile {
	type endpoint struct {
		baseURL, apiKey string
		timeout         time.Duration
	}
	clients := map[endpoint]*agents.Client{}
	if baseClient != nil {
		clients[endpoint{base.BaseURL, base.APIKey, base.Timeout}] = baseClient
	}
	out := make(map[string]agents.Profile, len(profiles))
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		p := profiles[name]
		key := endpoint{p.BaseURL, p.APIKey, p.Timeout}
		client := clients[key]
		if client == nil {
			cfg := base
			cfg.BaseURL, cfg.APIKey, cfg.Timeout = p.BaseURL, p.APIKey, p.Timeout
			cfg.Logger = cmp.Or(base.Logger, slog.Default()).With("model_profile", name)
			client = agents.NewClient(cfg)
			clients[key] = client
		}
		out[name] = agents.Profile{Client: client, Model: p.Model}
	}
	return out
}

// checkProfiles reports the first workflow that names a model profile MODEL_PROFILES
// does not define.
func checkProfiles(defs []*workflow.Definition, profiles map[string]ModelProfile) error {
	for _, d := range defs {
		var missing []string
		for _, name := range d.Profiles() {
			if _, ok := profiles[name]; !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("workflow %s (%s) uses model profile %s, which MODEL_PROFILES does not define", d.Name, d.Source, strings.Join(missing, ", "))
		}
	}
	return nil
}

// preferredProfileNotes says, for each artifact of defs whose prefer_model names a
// profile defined does not report (docs/workflows.md, "Pipelines"), that it is
// written on the main model: one line per artifact, "file: <kind>artifact "article"
// prefers …", for the start-up log (kind "") and "workflows validate" ("warning: ").
func preferredProfileNotes(defs []*workflow.Definition, defined func(string) bool, kind string) []string {
	var out []string
	for _, d := range defs {
		for _, a := range d.Artifacts {
			if a.PreferModel != "" && a.WritingProfile(defined) == "" {
				out = append(out, fmt.Sprintf("%s: %sartifact %q prefers the model profile %q (prefer_model), which MODEL_PROFILES does not define: it is written on the main model (OPENAI_MODEL)",
					d.Source, kind, a.ID, a.PreferModel))
			}
		}
	}
	return out
}

// definedIn reports whether profiles defines a profile.
func definedIn[V any](profiles map[string]V) func(string) bool {
	return func(name string) bool {
		_, ok := profiles[name]
		return ok
	}
}

// profileNames reads the names of MODEL_PROFILES's profiles, for "workflows
// validate", without checking them or reading their keys; an empty path has none.
// Errors: the file cannot be read or is not a YAML mapping.
func profileNames(path string) (map[string]bool, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("MODEL_PROFILES: %w", err)
	}
	var raw map[string]yaml.Node
	if err := yaml.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("MODEL_PROFILES %s: %w", path, err)
	}
	out := make(map[string]bool, len(raw))
	for name := range raw {
		out[name] = true
	}
	return out, nil
}

// modelURLs are the base URLs of the main model (baseURL) and of every profile, for
// the failure messages (failureClassifier).
func modelURLs(baseURL string, profiles map[string]ModelProfile) []string {
	urls := []string{baseURL}
	for _, p := range profiles {
		if p.BaseURL != "" {
			urls = append(urls, p.BaseURL)
		}
	}
	return urls
}
