// Package mcp makes the tools of Model Context Protocol servers tools of threadwright's
// agents (docs/tools.md, "MCP servers"). It adapts one technology, the
// official Go SDK github.com/modelcontextprotocol/go-sdk, to package agents' Registry.
//
// LoadConfig reads the servers from a YAML file (see Config): a program spoken to over
// stdio, or a streamable HTTP endpoint. Connect starts them at start-up and lists their
// tools; Sources.Register adds each tool to an agents.Registry as "prefix__tool" in the
// category "MCP: NAME", with the server's description and input schema, classified
// for the tool policy from its annotations and the server's Trusted flag (docs/tools.md, "Tool
// policy"); Sources.Close
// stops the servers at shutdown:
//
//	cfg, err := mcp.LoadConfig(path)
//	srcs, err := mcp.Connect(ctx, cfg, logger)
//	defer srcs.Close()
//	err = srcs.Register(registry)
//
// A call runs tools/call under the server's timeout and returns the result's text.
// Failures stay with the server's own tools, never the bot:
//
//   - a result with isError, or a JSON-RPC error (unknown tool, invalid arguments),
//     is a tool error (ErrToolFailed) whose message the model reads;
//   - a server that is down, died, or did not answer in time gives ErrUnavailable,
//     "MCP server NAME is not available: …". A lost connection is re-established at
//     the next call; failed attempts back off (Config.RetryDelay, doubling up to
//     Config.MaxRetryDelay), and calls during the backoff fail at once. After a
//     timeout the next call pings the server first and restarts it if it is stuck.
//   - a server that fails at start-up is logged and its tools are left out, unless
//     it is Required.
//
// A call cut off by a server that dies is not retried: a tool call may have effects.
// Tools are listed once, at start-up: a server that was down then contributes none
// until the bot restarts, and later changes to a server's tool list are not followed.
//
// The files follow a server's life: config.go reads the YAML; sources.go connects
// every server and registers its tools; server.go keeps one server's session (start,
// reconnect with backoff, health check, stop); tools.go turns its tools/list into
// ToolSpecs; call.go runs tools/call and turns the result or the failure into what
// the model reads.
package mcp
