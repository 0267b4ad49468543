// Package toolbox holds the tools threadwright brings itself (docs/tools.md, "Tools":
// the built-in tools), beside the web's (package agents/web) and those of
// MCP servers (package agents/mcp): current_time and calculate, which Register adds
// to a Registry, and search_knowledge (KnowledgeTool), which searches the knowledge
// base `threadwright ingest` loaded (package knowledge).
//
// They are ordinary tools of package agents: a ToolSpec and a Tool, whose output is
// trusted (docs/tools.md, "Tool policy"). search_knowledge numbers its passages "[n] source —
// heading", the labels the answer cites and package agents/mrkdwn matches to its
// sources (docs/tools.md, "Citations").
package toolbox
