package agents

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"unicode"

	openai "github.com/sashabaranov/go-openai"
	"gopkg.in/yaml.v3"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
)

// The tool policy (docs/tools.md, "Tool policy"): which tools a channel is offered
// (ToolPolicy), which calls need a person's confirmation before they run
// (approvalReason), and how tool output reaches the model (ToolOutput).

// ToolPolicy is the per-channel tool allowlist read from TOOL_POLICY: a channel is
// offered only the tools its entry allows, a channel without an entry those of
// Default. A nil *ToolPolicy allows every tool. Patterns are path.Match globs over
// tool names: "search_knowledge", "crm__*", "*".
type ToolPolicy struct {
	// Default are the patterns of channels without an entry; empty allows no tool.
	Default []string `yaml:"default"`
	// Channels maps a channel id (C…, G…, D…) to its patterns.
	Channels map[string][]string `yaml:"channels"`
}

// ErrInvalidPolicy means a TOOL_POLICY file is unreadable or malformed; the error says
// where.
var ErrInvalidPolicy = errors.New("agents: invalid tool policy")

// LoadToolPolicy reads the YAML tool policy at file:
//
//	default: [get_current_time, search_knowledge]   # required; [] allows nothing, ["*"] everything
//	channels:
//	  C0123SUPPORT: [search_knowledge, "crm__*"]
//	  C0456RESEARCH: ["*"]
//
// Errors (ErrInvalidPolicy): the file cannot be read, is not that shape (unknown keys
// included), has no default entry, or holds a malformed pattern.
func LoadToolPolicy(file string) (*ToolPolicy, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPolicy, err)
	}
	return ParseToolPolicy(data)
}

// ParseToolPolicy parses a tool policy (see LoadToolPolicy). Errors: ErrInvalidPolicy.
func ParseToolPolicy(data []byte) (*ToolPolicy, error) {
	var raw struct {
		Default  *[]string           `yaml:"default"`
		Channels map[string][]string `yaml:"channels"`
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidPolicy, err)
	}
	if raw.Default == nil {
		return nil, fmt.Errorf("%w: no \"default\" entry (write default: [\"*\"] to allow every tool elsewhere, or default: [] for none)", ErrInvalidPolicy)
	}
	p := &ToolPolicy{Default: *raw.Default, Channels: raw.Channels}
	check := func(where string, patterns []string) error {
		for _, pat := range patterns {
			if _, err := path.Match(pat, ""); err != nil || strings.TrimSpace(pat) == "" {
				return fmt.Errorf("%w: %s: pattern %q is not a tool name or glob", ErrInvalidPolicy, where, pat)
			}
		}
		return nil
	}
	if err := check("default", p.Default); err != nil {
		return nil, err
	}
	for ch, patterns := range p.Channels {
		if err := check("channels."+ch, patterns); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Allows reports whether channelID may be offered tool name. A nil policy allows
// everything.
func (p *ToolPolicy) Allows(channelID, name string) bool {
	if p == nil {
		return true
	}
	patterns, ok := p.Channels[channelID]
	if !ok {
		patterns = p.Default
	}
	return slices.ContainsFunc(patterns, func(pat string) bool {
		ok, _ := path.Match(pat, name)
		return ok
	})
}

// For returns the tools of r that the policy allows in channelID: r itself for a nil
// policy.
func (p *ToolPolicy) For(r *Registry, channelID string) *Registry {
	if p == nil || r == nil {
		return r
	}
	return r.filter(func(name string) bool { return p.Allows(channelID, name) })
}

// filter returns a Registry of the tools of r whose names keep accepts.
func (r *Registry) filter(keep func(name string) bool) *Registry {
	sub := NewRegistry()
	r.mu.RLock()
	defer r.mu.RUnlock()
	for name, t := range r.tools {
		if keep(name) {
			sub.tools[name] = t
		}
	}
	return sub
}

// Trust labels of ToolOutput.
const (
	TrustUntrusted = "untrusted" // ToolSpec.Untrusted: content from outside the organization
	TrustInternal  = "internal"  // any other tool's output
)

// outputTag matches the tool_output delimiters, opening or closing, in any case and
// with any spacing (Unicode spaces and invisible format characters too), so that
// content cannot end its block or forge another.
var outputTag = regexp.MustCompile(`(?i)<[\s\v\p{Z}\p{Cf}]*(/?)[\s\v\p{Z}\p{Cf}]*tool_output`)

// ToolOutput wraps a tool's result for the model as data, not instructions (docs/tools.md,
// "Tool policy"):
//
//	<tool_output name="fetch_url" trust="untrusted">
//	…
//	</tool_output>
//
// trust is TrustUntrusted or TrustInternal. A delimiter inside out, opening or
// closing, is neutralised ("<" becomes "&lt;"), so the block ends only where it
// ends.
func ToolOutput(name, trust, out string) string {
	out = outputTag.ReplaceAllString(out, "&lt;${1}tool_output")
	return fmt.Sprintf("<tool_output name=%q trust=%q>\n%s\n</tool_output>", name, trust, out)
}

// MaxUntrustedDescription bounds, in runes, the description of a tool from a server
// not marked trusted (FenceDescription), and each "description" in its schema.
const MaxUntrustedDescription = 300

// descriptionTag matches the tool_description delimiters as outputTag matches
// tool_output's.
var descriptionTag = regexp.MustCompile(`(?i)<[\s\v\p{Z}\p{Cf}]*(/?)[\s\v\p{Z}\p{Cf}]*tool_description`)

// FenceDescription returns desc, the description of a tool from a server not marked
// trusted (ToolSpec.UntrustedDescription), cut to MaxUntrustedDescription runes and
// fenced as data for the model (docs/tools.md, "Tool policy"):
//
//	<tool_description trust="untrusted">…</tool_description>
//
// Delimiters of tool_description or tool_output inside desc are neutralised ("<"
// becomes "&lt;"), so the fence ends only where it ends.
func FenceDescription(desc string) string {
	desc = textcut.Ellipsis(strings.TrimSpace(desc), MaxUntrustedDescription, unicode.IsSpace)
	desc = descriptionTag.ReplaceAllString(desc, "&lt;${1}tool_description")
	desc = outputTag.ReplaceAllString(desc, "&lt;${1}tool_output")
	return "<tool_description trust=\"untrusted\">" + desc + "</tool_description>"
}

// ToolOutputBody returns the content of a ToolOutput block, and s itself when it is
// not one.
func ToolOutputBody(s string) string {
	head, rest, ok := strings.Cut(s, "\n")
	if !ok || !strings.HasPrefix(head, "<tool_output ") || !strings.HasSuffix(rest, "\n</tool_output>") {
		return s
	}
	return strings.TrimSuffix(rest, "\n</tool_output>")
}

// toolMessage is the "tool" message that answers call tc with rec's result, wrapped
// by ToolOutput with the trust of the tool's spec in reg, or untrusted when the call
// reported untrusted content (rec.Untrusted); TrustInternal when reg has no such
// tool: the result is the executor's own error.
func toolMessage(reg *Registry, tc openai.ToolCall, rec conversation.ToolCall) openai.ChatCompletionMessage {
	trust := trustOf(reg, tc.Function.Name)
	if rec.Untrusted {
		trust = TrustUntrusted
	}
	return openai.ChatCompletionMessage{
		Role:       openai.ChatMessageRoleTool,
		ToolCallID: tc.ID,
		Content:    ToolOutput(tc.Function.Name, trust, rec.Result),
	}
}

// untrusted reports whether rec's result is untrusted content: its tool's spec in
// reg is Untrusted, or the call reported it (ReportUntrusted).
func untrusted(reg *Registry, rec conversation.ToolCall) bool {
	if rec.Untrusted {
		return true
	}
	spec, _, ok := reg.Lookup(rec.Name)
	return ok && spec.Untrusted
}

func trustOf(reg *Registry, name string) string {
	if spec, _, ok := reg.Lookup(name); ok && spec.Untrusted {
		return TrustUntrusted
	}
	return TrustInternal
}
