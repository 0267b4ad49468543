package main

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadProfiles(t *testing.T) {
	base := &Config{OpenAIBaseURL: "https://api.openai.com/v1", OpenAIAPIKey: "sk-main-secret", ModelTimeout: time.Minute}
	t.Setenv("ENHANCE_KEY", "sk-enhance-secret")
	got, err := LoadProfiles(writeFile(t, "p.yaml", `
enhance:
  base_url: https://other.example.com/v1
  model: big-model
  api_key: ${ENHANCE_KEY}
  timeout: 2m
editor:
  model: gpt-editor
`), base)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]ModelProfile{
		"enhance": {BaseURL: "https://other.example.com/v1", Model: "big-model", APIKey: "sk-enhance-secret", Timeout: 2 * time.Minute},
		"editor":  {BaseURL: "https://api.openai.com/v1", Model: "gpt-editor", APIKey: "sk-main-secret", Timeout: time.Minute},
	}
	if len(got) != len(want) || got["enhance"] != want["enhance"] || got["editor"] != want["editor"] {
		t.Fatalf("profiles = %+v; want %+v", got, want)
	}
	if none, err := LoadProfiles("", base); err != nil || none != nil {
		t.Fatalf("no file: %v %v", none, err)
	}

	for name, c := range map[string]struct{ yaml, want string }{
		"no model":       {"x:\n  base_url: https://a.example/v1\n", `profile "x": model is required`},
		"bad name":       {"Big Model:\n  model: m\n", `profile "Big Model": a name is lower-case`},
		"bad url":        {"x:\n  model: m\n  base_url: ftp://a\n", "base_url: expected an http(s) URL"},
		"unknown field":  {"x:\n  model: m\n  apikey: k\n", "field apikey not found"},
		"unset variable": {"x:\n  model: m\n  api_key: ${NOT_SET_ANYWHERE}\n", "the environment variable NOT_SET_ANYWHERE is not set"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := LoadProfiles(writeFile(t, "p.yaml", c.yaml), base)
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "MODEL_PROFILES") {
				t.Fatalf("error %v; want one with %q", err, c.want)
			}
			if strings.Contains(err.Error(), "secret") {
				t.Fatalf("error shows a key: %v", err)
			}
		})
	}
}

const profiledYAML = `
name: memo
title: Memo
artifacts:
  - id: draft
    title: Draft
  - id: polish
    title: Polished memo
    depends_on: [draft]
    model: enhance
`

func TestCheckProfiles(t *testing.T) {
	def, err := workflow.Parse("memo.yaml", []byte(profiledYAML))
	if err != nil {
		t.Fatal(err)
	}
	err = checkProfiles([]*workflow.Definition{def}, nil)
	if err == nil || !strings.Contains(err.Error(), "workflow memo (memo.yaml) uses model profile enhance, which MODEL_PROFILES does not define") {
		t.Fatalf("error %v", err)
	}
	if err := checkProfiles([]*workflow.Definition{def}, map[string]ModelProfile{"enhance": {Model: "m"}}); err != nil {
		t.Fatal(err)
	}
}

// TestE2EModelProfile runs one artifact on a second model provider: its write goes to
// the profile's endpoint with the profile's model and key, everything else to the
// main one.
func TestE2EModelProfile(t *testing.T) {
	h := newWorkflowHarness(t)
	second := openaitest.NewServer()
	t.Cleanup(second.Close)
	second.Handle(h.model.respond)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memo.yaml"), []byte(profiledYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ENHANCE_API_KEY", "sk-enhance-secret")
	h.env["WORKFLOWS_DIR"] = dir
	h.env["MODEL_PROFILES"] = writeFile(t, "profiles.yaml", "enhance:\n  base_url: "+second.URL()+"\n  model: enhance-model\n  api_key: ${ENHANCE_API_KEY}\n")
	h.start()
	thread := h.startWorkflow(alice, "memo")
	h.click(thread, alice, "Approve", "")
	h.latest(thread, "Approve", "Polished memo")
	reqs := second.Requests()
	if len(reqs) == 0 {
		t.Fatalf("the profile's endpoint got no request:\n%s", h.transcript(thread))
	}
	for _, r := range reqs {
		if r.Chat.Model != "enhance-model" || r.Header.Get("Authorization") != "Bearer sk-enhance-secret" {
			t.Errorf("profile request: model %q, auth %q", r.Chat.Model, r.Header.Get("Authorization"))
		}
		if !strings.Contains(systemText(r), "(`polish`)") {
			t.Errorf("the profile wrote something other than polish:\n%s", systemText(r))
		}
	}
	for _, r := range h.ai.Requests() {
		if strings.Contains(systemText(r), "(`polish`)") && forced(r) == "commit_artifact_final_text" {
			t.Error("polish was written by the main model")
		}
	}
}

func TestE2EUndefinedModelProfileRefusesStartup(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "memo.yaml"), []byte(profiledYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("WORKFLOWS_DIR", dir)
	t.Setenv("MODEL_PROFILES", "")
	for k, v := range map[string]string{"SLACK_BOT_TOKEN": "xoxb-x", "SLACK_APP_TOKEN": "xapp-x", "OPENAI_API_KEY": "sk-x", "DATA_DIR": t.TempDir(), "HTTP_ADDR": ""} {
		t.Setenv(k, v)
	}
	m := NewMain()
	if err := LoadConfig(&m.Config); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	m.Stderr, m.Stdout = &out, &out
	err := m.Run(t.Context())
	if err == nil || !strings.Contains(err.Error(), "uses model profile enhance, which MODEL_PROFILES does not define") {
		t.Fatalf("Run = %v", err)
	}
}

func TestModelProfilesClients(t *testing.T) {
	srv := openaitest.NewServer()
	t.Cleanup(srv.Close)
	base := agents.ClientConfig{
		BaseURL: "https://api.openai.com/v1", APIKey: "sk-main", Timeout: time.Minute,
		MaxRetries: -1, MaxElapsed: time.Second, MaxConcurrent: 3, Logger: slog.New(slog.DiscardHandler),
	}
	main := agents.NewClient(base)
	got := modelProfiles(map[string]ModelProfile{
		"editor":  {BaseURL: base.BaseURL, APIKey: base.APIKey, Timeout: base.Timeout, Model: "gpt-editor"},
		"enhance": {BaseURL: srv.URL(), APIKey: "sk-other", Timeout: time.Minute, Model: "big"},
		"polish":  {BaseURL: srv.URL(), APIKey: "sk-other", Timeout: time.Minute, Model: "bigger"},
		"slow":    {BaseURL: srv.URL(), APIKey: "sk-other", Timeout: time.Hour, Model: "big"},
	}, base, main)

	// One client per endpoint, key and timeout, the main one included: they share
	// the bound on calls in flight.
	if got["editor"].Client != main || got["enhance"].Client != got["polish"].Client ||
		got["enhance"].Client == main || got["slow"].Client == got["enhance"].Client {
		t.Errorf("clients not shared by endpoint: %+v", got)
	}
	if got["polish"].Model != "bigger" {
		t.Errorf("polish model %q", got["polish"].Model)
	}
	// A profile's client has the retry and concurrency settings of the main one.
	enhance := got["enhance"].Client.(*agents.Client)
	if enhance.Limit() != 3 {
		t.Errorf("Limit() = %d, want MaxConcurrent 3", enhance.Limit())
	}
	srv.Push(openaitest.Response{Status: 503}, openaitest.Response{Text: "not retried"})
	req := openai.ChatCompletionRequest{Model: "big", Messages: []openai.ChatCompletionMessage{{Role: "user", Content: "x"}}}
	if _, err := enhance.Complete(context.Background(), req); err == nil || len(srv.Requests()) != 1 {
		t.Errorf("err %v after %d requests; want the 503, not retried", err, len(srv.Requests()))
	}
	if h := srv.Requests()[0].Header.Get("Authorization"); h != "Bearer sk-other" {
		t.Errorf("Authorization %q", h)
	}
}
