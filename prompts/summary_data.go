package prompts

// The names of the summarizer's templates (docs/architecture.md, "Models": older
// history is summarized into the checkpoint), for Set.Render. The summarizer
// (agents.Summarizer) sends SummarizeSystem as the system prompt and SummarizeRequest
// as the user message; the model answers with the updated summary in plain text,
// without tools.
const (
	// SummarizeSystem is the summarizer's system prompt: what to keep, the workflow
	// note, the language and the length; data: SummarizeSystemData.
	SummarizeSystem = "summarize_system"
	// SummarizeRequest is the previous summary and the messages to fold into it; data:
	// SummarizeRequestData.
	SummarizeRequest = "summarize_request"
)

// SummarizeSystemData is the data of the SummarizeSystem template.
type SummarizeSystemData struct {
	// Workflow is the name of the thread's workflow, when it runs one: its artifact
	// texts, selections and state are stored apart from the summary, so the summary
	// must not repeat them. Empty for a free conversation.
	Workflow string
	// Language is the language to write in, in English, e.g. "Russian (русский)";
	// empty: the language the conversation is written in.
	Language string
	// MaxChars is the longest summary to write, in characters.
	MaxChars int
}

// SummarizeRequestData is the data of the SummarizeRequest template.
type SummarizeRequestData struct {
	// Previous is the summary so far ("" for none).
	Previous string
	// Messages are the messages to fold in, oldest first.
	Messages []SummaryMessage
}

// SummaryMessage is one message of the thread shown to the summarizer.
type SummaryMessage struct {
	// Role is "user" (a person's message to the bot), "assistant" (the bot's reply) or
	// "context" (a person's message posted in the thread before the bot was asked).
	Role string
	// Author names who wrote it: a Slack mention "<@U123>" for a person ("" when
	// unknown); ignored for the assistant.
	Author string
	// Text is the message text, possibly shortened.
	Text string
}
