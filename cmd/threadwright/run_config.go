package main

import (
	"time"

	"fmt"
	"log/slog"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/workflow"
	"github.com/threadwright/threadwright/internal/redact"
	"github.com/threadwright/threadwright/prompts"
)

// runConfig is what every builder of a run reads: the configuration, the files it
// names, the prompt templates, and the logger every part writes to. Main.openConfig fills
// it in that order.
type runConfig struct {
	*Config
	files    configFiles
	scrubber *redact.Redactor // scrubs the configured secrets from logs and Slack (Config.redactor)
	log      *slog.Logger     // the run's logger, through scrubber
	prompts  *prompts.Set
}

// configFiles are the files the configuration names, read and checked before Run
// starts anything: a broken file is a start-up error that names its variable.
type configFiles struct {
	mcp          mcp.Config                     // MCP_CONFIG's servers (none when unset)
	profiles     map[string]ModelProfile        // MODEL_PROFILES (nil when unset)
	policy       *agents.ToolPolicy             // TOOL_POLICY (nil: every tool everywhere)
	instructions *agents.Instructions           // EXECUTOR_INSTRUCTIONS(_CHANNELS)
	suggested    *conversation.SuggestedPrompts // SUGGESTED_PROMPTS (nil: the built-in ones)
	workflows    *workflow.Set                  // the built-in workflows and WORKFLOWS_DIR's
}

// loadConfigFiles reads the files c names, and checks that every model profile a
// workflow names is defined.
func loadConfigFiles(c *Config) (f configFiles, err error) {
	if c.MCPConfig != "" {
		if f.mcp, err = mcp.LoadConfig(c.MCPConfig); err != nil {
			return f, fmt.Errorf("MCP_CONFIG: %w", err)
		}
	}
	if f.profiles, err = LoadProfiles(c.ModelProfiles, c); err != nil {
		return f, err
	}
	if c.ToolPolicy != "" {
		if f.policy, err = agents.LoadToolPolicy(c.ToolPolicy); err != nil {
			return f, fmt.Errorf("TOOL_POLICY: %w", err)
		}
	}
	if f.instructions, err = agents.LoadInstructions(c.ExecutorInstructions, c.ExecutorInstructionsChannels); err != nil {
		return f, fmt.Errorf("EXECUTOR_INSTRUCTIONS: %w", err)
	}
	if c.SuggestedPrompts != "" {
		if f.suggested, err = conversation.LoadSuggestedPrompts(c.SuggestedPrompts); err != nil {
			return f, fmt.Errorf("SUGGESTED_PROMPTS: %w", err)
		}
	}
	if f.workflows, err = LoadWorkflows(c.WorkflowsDir); err != nil {
		return f, err
	}
	return f, checkProfiles(f.workflows.All(), f.profiles)
}

// Hooks let the caller of Main.Run watch the model calls, tool calls and scope
// verdicts of a run, and give it another knowledge base: threadwright eval (package
// eval) records a case's run through them. A nil field changes nothing.
type Hooks struct {
	// Model wraps every model client: the main one (Main.Model, or OPENAI_BASE_URL's
	// client) and each of MODEL_PROFILES's.
	Model func(agents.Completer) agents.Completer
	// Tool wraps every tool, once all are registered.
	Tool func(agents.ToolSpec, agents.Tool) agents.Tool
	// Scope wraps the scope check, when SCOPE_* configure one.
	Scope func(conversation.ScopeChecker) conversation.ScopeChecker
	// Knowledge, when set, is what search_knowledge searches instead of the store.
	Knowledge conversation.Knowledge
	// Now, when set, is the conversation service's clock (the times of inputs, the
	// merge policy's window): a test sets it forward rather than waiting.
	Now func() time.Time
}
