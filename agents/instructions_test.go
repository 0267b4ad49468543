package agents_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadInstructions(t *testing.T) {
	global := writeFile(t, "global.md", "\n## Workflow patterns\n- Order questions: lookup, then calculate.\n\n")
	support := writeFile(t, "support.md", "Support: search_knowledge first.")

	t.Run("None", func(t *testing.T) {
		in, err := agents.LoadInstructions("", "")
		if err != nil || in != nil || in.For("C1") != "" {
			t.Fatalf("LoadInstructions = %v, %v", in, err)
		}
	})
	t.Run("DefaultAndChannels", func(t *testing.T) {
		in, err := agents.LoadInstructions(global, " C1 : "+support+" ,")
		if err != nil {
			t.Fatal(err)
		}
		if got := in.For("C2"); got != "## Workflow patterns\n- Order questions: lookup, then calculate." {
			t.Errorf("For(C2) = %q", got)
		}
		if got := in.For("C1"); got != "Support: search_knowledge first." {
			t.Errorf("For(C1) = %q", got)
		}
	})
	t.Run("ChannelsOnly", func(t *testing.T) {
		in, err := agents.LoadInstructions("", "C1:"+support)
		if err != nil || in.For("C1") == "" || in.For("C2") != "" {
			t.Fatalf("LoadInstructions = %+v, %v", in, err)
		}
	})
	big := writeFile(t, "big.md", strings.Repeat("x", agents.MaxInstructionsBytes+1))
	exact := writeFile(t, "exact.md", strings.Repeat("x", agents.MaxInstructionsBytes))
	if _, err := agents.LoadInstructions(exact, ""); err != nil {
		t.Errorf("a file of exactly %d bytes: %v", agents.MaxInstructionsBytes, err)
	}
	for name, c := range map[string]struct{ file, channels, want string }{
		"TooLarge":        {big, "", "larger than 16384 bytes"},
		"TooLargeChannel": {"", "C1:" + big, "channel C1"},
		"Missing":         {filepath.Join(t.TempDir(), "nope.md"), "", "no such file"},
		"NotText":         {writeFile(t, "bin", "\xff\xfe\x00"), "", "not UTF-8"},
		"NoPath":          {"", "C1:", "want CHANNEL_ID:PATH"},
		"NoColon":         {"", "C1", "want CHANNEL_ID:PATH"},
		"Twice":           {"", "C1:" + support + ",C1:" + global, "two files"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := agents.LoadInstructions(c.file, c.channels)
			if !errors.Is(err, agents.ErrInvalidInstructions) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrInvalidInstructions saying %q", err, c.want)
			}
		})
	}
}

func TestExecutorPromptCarriesInstructions(t *testing.T) {
	in := &agents.Instructions{Default: "PATTERN-DEFAULT: use calculate for sums.", Channels: map[string]string{"C9": "PATTERN-C9: use current_time."}}
	srv := MustServer(t)
	exec := newExecutor(t, srv, nil, func(c *agents.ExecutorConfig) { c.Instructions = in })

	for _, c := range []struct {
		name, channel, context, want, not string
	}{
		{"Default", "C1", "", "PATTERN-DEFAULT", "PATTERN-C9"},
		{"Channel", "C9", "", "PATTERN-C9", "PATTERN-DEFAULT"},
		// In an assistant thread the viewed channel's instructions apply.
		{"ViewedChannel", "D1", "C9", "PATTERN-C9", "PATTERN-DEFAULT"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := prompt("hi")
			p.Key.ChannelID, p.ContextChannelID = c.channel, c.context
			srv.Push(openaitest.Response{Text: "hello"})
			if _, err := exec.Execute(context.Background(), p, nil); err != nil {
				t.Fatal(err)
			}
			reqs := srv.Requests()
			system := reqs[len(reqs)-1].SystemPrompt()
			if !strings.Contains(system, "## Instructions for this deployment\n"+c.want) || strings.Contains(system, c.not) {
				t.Fatalf("system prompt:\n%s", system)
			}
		})
	}

	t.Run("None", func(t *testing.T) {
		plain := newExecutor(t, srv, nil)
		srv.Push(openaitest.Response{Text: "hello"})
		if _, err := plain.Execute(context.Background(), prompt("hi"), nil); err != nil {
			t.Fatal(err)
		}
		reqs := srv.Requests()
		if system := reqs[len(reqs)-1].SystemPrompt(); strings.Contains(system, "Instructions for this deployment") {
			t.Fatalf("system prompt without instructions:\n%s", system)
		}
	})
}
