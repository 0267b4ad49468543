package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/internal/textcut"
)

// grace lets a call's own timeout fire before the executor's (ToolSpec.Timeout), so
// the model reads an error naming the server rather than a bare "timed out".
const grace = 2 * time.Second

// toolSpec is a server's tool as registered: its spec and its name on the server.
type toolSpec struct {
	spec agents.ToolSpec
	tool string
}

// specs returns the server's tools as agents.ToolSpecs, sorted by the server's
// names, so the hash suffixes of clashing names are deterministic.
func (s *server) specs() []toolSpec {
	tools := slices.Clone(s.tools)
	slices.SortFunc(tools, func(a, b *sdk.Tool) int { return strings.Compare(a.Name, b.Name) })
	used := make(map[string]bool)
	var out []toolSpec
	for _, t := range tools {
		name := toolName(s.cfg.Prefix, t.Name, used)
		used[name] = true
		desc := strings.TrimSpace(t.Description)
		if desc == "" {
			desc = t.Title
		}
		if desc == "" && t.Annotations != nil {
			desc = t.Annotations.Title
		}
		if strings.TrimSpace(desc) == "" {
			desc = fmt.Sprintf("The %s tool of the MCP server %s.", t.Name, s.cfg.Name)
		}
		if !s.cfg.Trusted {
			desc = agents.FenceDescription(desc) // docs/tools.md, "Tool policy"
		}
		params, err := inputSchema(t.InputSchema, s.cfg.Trusted)
		if err != nil {
			s.log.Warn("MCP tool left out: unusable input schema", slog.String(logTool, t.Name), slog.Any(logErr, err))
			continue
		}
		spec := agents.ToolSpec{
			Name:        name,
			Description: desc,
			Category:    "MCP: " + s.cfg.Name,
			Parameters:  params,
			Timeout:     s.cfg.ConnectTimeout + s.cfg.Timeout + grace,
		}
		classify(&spec, t.Annotations, s.cfg.Trusted)
		spec.UntrustedDescription = !s.cfg.Trusted
		out = append(out, toolSpec{spec: spec, tool: t.Name})
	}
	return out
}

// classify sets the tool policy's fields of spec (docs/tools.md, "Tool policy") from a tool's
// annotations (nil: none) and whether its server is trusted (ServerConfig.Trusted):
//   - readOnlyHint: ReadOnly, it runs without confirmation;
//   - otherwise NeedsApproval when destructiveHint is true or the server is not
//     trusted (the hints of an untrusted server cannot vouch for a side effect);
//   - Untrusted output when the server is not trusted or openWorldHint is true.
//
// The MCP defaults of absent hints (destructiveHint and openWorldHint true) are not
// assumed for a trusted server: its operator vouched for it.
func classify(spec *agents.ToolSpec, a *sdk.ToolAnnotations, trusted bool) {
	if a == nil {
		a = &sdk.ToolAnnotations{}
	}
	destructive := a.DestructiveHint != nil && *a.DestructiveHint
	openWorld := a.OpenWorldHint != nil && *a.OpenWorldHint
	spec.ReadOnly = a.ReadOnlyHint
	spec.NeedsApproval = !a.ReadOnlyHint && (destructive || !trusted)
	spec.Untrusted = !trusted || openWorld
}

// toolName is prefix + "__" + tool fitted to OpenAI's function names: characters
// outside a-z, A-Z, 0-9, "_" and "-" become "_"; a name longer than 64 characters,
// or already used, is cut and ends with "_" and 8 hex digits of the raw name's hash.
func toolName(prefix, tool string, used map[string]bool) string {
	raw := prefix + "__" + tool
	name := toolChars.ReplaceAllString(raw, "_")
	if len(name) <= 64 && !used[name] {
		return name
	}
	sum := sha256.Sum256([]byte(raw))
	suffix := "_" + hex.EncodeToString(sum[:4])
	return name[:min(len(name), 64-len(suffix))] + suffix
}

// inputSchema converts a tool's input schema as the client decoded it (a JSON
// object) to JSON, making sure it says "type":"object" and has "properties", which
// OpenAI requires of function parameters. The schema of a server not trusted has
// each "description" string in it cut to agents.MaxUntrustedDescription runes.
func inputSchema(schema any, trusted bool) (json.RawMessage, error) {
	m, ok := schema.(map[string]any)
	if schema == nil {
		m, ok = map[string]any{}, true
	}
	if !ok {
		return nil, fmt.Errorf("input schema is %T, not a JSON object", schema)
	}
	m = maps.Clone(m)
	if t, ok := m["type"]; ok && t != "object" {
		return nil, fmt.Errorf("input schema type is %v, not object", t)
	}
	m["type"] = "object"
	if _, ok := m["properties"]; !ok {
		m["properties"] = map[string]any{}
	}
	if !trusted {
		m = cutDescriptions(m, 0).(map[string]any)
	}
	return json.Marshal(m)
}

// maxSchemaDepth bounds how deep cutDescriptions looks into a schema; deeper values
// are dropped.
const maxSchemaDepth = 32

// cutDescriptions returns a copy of v, a decoded JSON value at depth, in which every
// "description" string of an object is cut to agents.MaxUntrustedDescription runes.
func cutDescriptions(v any, depth int) any {
	if depth > maxSchemaDepth {
		return nil
	}
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			if d, ok := e.(string); ok && k == "description" {
				out[k] = textcut.Ellipsis(d, agents.MaxUntrustedDescription, unicode.IsSpace)
				continue
			}
			out[k] = cutDescriptions(e, depth+1)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cutDescriptions(e, depth+1)
		}
		return out
	}
	return v
}
