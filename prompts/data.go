package prompts

import "strings"

// ExecutorSystemData is the data of the ExecutorSystem template.
type ExecutorSystemData struct {
	// Date is today's date as the model should read it, e.g. "Tuesday, 14 May 2024
	// (UTC)". Only the date: a prompt that changed every minute would defeat the API's
	// prompt caching.
	Date string
	// Categories lists the available tools grouped by category, sorted by category
	// name; empty when the executor has no tools.
	Categories []ToolCategory
	// Summary condenses the earlier conversation, when it has been summarized.
	Summary string
	// Instructions are the deployment's own guidance for the channel
	// (EXECUTOR_INSTRUCTIONS), "" for none.
	Instructions string
	// OwnToolRules replaces the built-in tool rules (GroundingRule, NoRepeatRule) with
	// the "## Tool rules" section of Instructions; set it with HasToolRules.
	OwnToolRules bool
	// Recent lists earlier tool results of the thread that the recall tool can fetch,
	// newest first; empty when there are none or recall is not offered.
	Recent []RecentResult
}

// The executor's two firm tool rules, as its system prompt words them
// (docs/tools.md, "Executor instructions").
const (
	GroundingRule = "Always use a tool to ground a factual answer when one applies"
	NoRepeatRule  = "Do not call the same tool again for what you already have"
)

// ToolRulesHeading is the heading of the section of a deployment's instructions that
// replaces the built-in tool rules (GroundingRule, NoRepeatRule).
const ToolRulesHeading = "## Tool rules"

// HasToolRules reports whether instructions have their own tool rules: a line that
// reads ToolRulesHeading (case and surrounding spaces ignored).
func HasToolRules(instructions string) bool {
	for line := range strings.SplitSeq(instructions, "\n") {
		if strings.EqualFold(strings.TrimSpace(line), ToolRulesHeading) {
			return true
		}
	}
	return false
}

// RecentResult is one earlier tool call of the thread whose result is stored: its
// recall reference, the tool's name and its arguments on one line.
type RecentResult struct {
	Ref       string
	Tool      string
	Arguments string
}

// ToolCategory is a group of tools for the executor's system prompt.
type ToolCategory struct {
	// Name is the category, e.g. "general".
	Name string
	// Tools are the category's tools, sorted by name.
	Tools []Tool
}

// Tool describes one tool to the model: its function name and what it does.
type Tool struct {
	Name        string
	Description string
}

// FinalAnswerData is the data of the FinalAnswer template.
type FinalAnswerData struct {
	// MaxSteps is the step bound that was reached.
	MaxSteps int
}

// ScopeData is the data of the ScopeSystem template.
type ScopeData struct {
	// Description says what the deployment is for, as a noun phrase that reads after
	// "This assistant is for", e.g. "questions about ACME's HR policies".
	Description string
	// ToolName is the function the classifier must call with its decision.
	ToolName string
}

// ScopeRequestData is the data of the ScopeRequest template.
type ScopeRequestData struct {
	// Recent is the tail of the conversation before the request, oldest first, so a
	// follow-up ("and the second one?") is classified with its context.
	Recent []Turn
	// Text is the request to classify.
	Text string
}

// Turn is one earlier message shown to the scope classifier.
type Turn struct {
	// Role is "user" or "assistant".
	Role string
	Text string
}

// ScopeRefusalData is the data of the ScopeRefusal template.
type ScopeRefusalData struct {
	// Description is the deployment's scope (see ScopeData.Description).
	Description string
	// UserID is the Slack user id of the person asking (U…), empty when unknown.
	UserID string
}
