package mcp_test

import (
	"path"
	"testing"

	"github.com/threadwright/threadwright/agents/mcp"
)

// TestPrefixesDoNotOverlapInPolicyGlobs: TOOL_POLICY allows a server's tools with
// "prefix__*" (docs/tools.md, "Tool policy"). No other server's tool may match that glob,
// whatever the servers are called: a server named "crm." or "crm__eu" must not have
// its tools allowed by the "crm__*" meant for the server crm.
func TestPrefixesDoNotOverlapInPolicyGlobs(t *testing.T) {
	for _, other := range []string{
		"{name: crm., command: [y]}",
		"{name: crm__eu, command: [y]}",
		"{name: x, command: [y], prefix: crm_}",
		"{name: x, command: [y], prefix: crm__eu}",
	} {
		cfg, err := mcp.LoadConfig(writeConfig(t, "servers:\n  - {name: crm, command: [x], trusted: true}\n  - "+other+"\n"))
		if err != nil {
			continue // refused: fine
		}
		a, b := cfg.Servers[0].Prefix, cfg.Servers[1].Prefix
		if ok, _ := path.Match(a+"__*", b+"__wipe"); ok {
			t.Errorf("servers crm and %s: the glob %q allows %q, a tool of the other server", other, a+"__*", b+"__wipe")
		}
	}
}
