package agents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/textcut"
	"github.com/threadwright/threadwright/prompts"
)

// RecallToolName is the name of the recall tool (Recall).
const RecallToolName = "recall"

// Bounds of recall (docs/tools.md, "Recall").
const (
	// MaxRecent is how many earlier tool results the executor's system prompt lists
	// (prompts.ExecutorSystemData.Recent), newest first.
	MaxRecent = 10
	// MaxRecentArguments bounds the bytes of a listed call's arguments; longer ones
	// are cut and marked.
	MaxRecentArguments = 160
	// MaxRecallResult bounds the bytes of a recalled result (the executor's
	// MaxToolResult bounds it too).
	MaxRecallResult = DefaultMaxToolResult
)

// recallKey is the context key of a turn's recallScope.
type recallKey struct{}

// recallScope is what recall may read in one turn: the thread's stored history and
// the tools its channel is offered.
type recallScope struct {
	key     conversation.Key
	history []conversation.Message
	offered *Registry
}

// withRecall returns ctx carrying the turn's thread, history and offered tools, for
// the recall tool that the turn's calls run.
func withRecall(ctx context.Context, key conversation.Key, history []conversation.Message, offered *Registry) context.Context {
	return context.WithValue(ctx, recallKey{}, recallScope{key: key, history: history, offered: offered})
}

// storedCall is one tool call of an earlier turn, with its reference.
type storedCall struct {
	ref  string
	call conversation.ToolCall
}

// storedCalls returns the tool calls that the assistant messages of history record
// (their Meta's "tool_calls", written by the conversation service), newest first,
// with their references. Failed, denied and recall calls are left out, and so are the
// calls of tools offered does not have (TOOL_POLICY: the channel may not use them now).
// A message's Meta holds its calls' whole results: a positive limit returns at most
// limit calls, decoding no older message once they are found.
func storedCalls(key conversation.Key, history []conversation.Message, offered *Registry, limit int) []storedCall {
	var out []storedCall
	for i := len(history) - 1; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		m := history[i]
		if m.Role != conversation.RoleAssistant || len(m.Meta) == 0 {
			continue
		}
		calls, ok := decodeCalls(m.Meta)
		if !ok {
			continue
		}
		for j := len(calls) - 1; j >= 0; j-- {
			c := calls[j]
			if c.Failed || c.Denied || c.Name == RecallToolName {
				continue
			}
			if _, _, ok := offered.Lookup(c.Name); !ok {
				continue
			}
			out = append(out, storedCall{ref: recallRef(key, m.Seq, j), call: c})
		}
	}
	return out
}

// listedCall is what the list of earlier results, and recall, read of a stored call:
// both decode it the same way, so that a call listed can be recalled.
type listedCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Result    string `json:"result"`
	Failed    bool   `json:"failed,omitempty"`
	Denied    bool   `json:"denied,omitempty"`
}

// decodeCalls returns the tool calls an assistant message's Meta records, as far as
// listedCall reads them; ok is false for a Meta that does not decode.
func decodeCalls(meta json.RawMessage) (calls []conversation.ToolCall, ok bool) {
	var m struct {
		ToolCalls []listedCall `json:"tool_calls"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return nil, false
	}
	calls = make([]conversation.ToolCall, len(m.ToolCalls))
	for i, c := range m.ToolCalls {
		calls[i] = conversation.ToolCall{Name: c.Name, Arguments: c.Arguments, Result: c.Result, Failed: c.Failed, Denied: c.Denied}
	}
	return calls, true
}

// recallRef is the reference of the j-th tool call of message seq in the thread of
// key: "r" and 8 hex digits of a hash of the three, so that a reference names one
// call of one thread and a reference from another thread finds nothing.
func recallRef(key conversation.Key, seq int64, j int) string {
	sum := sha256.Sum256([]byte(key.String() + "\x00" + strconv.FormatInt(seq, 10) + "\x00" + strconv.Itoa(j)))
	return "r" + hex.EncodeToString(sum[:4])
}

// recentResults lists at most MaxRecent earlier tool results of the thread (see
// storedCalls), newest first, with their arguments on one line, cut to
// MaxRecentArguments bytes.
func recentResults(key conversation.Key, history []conversation.Message, offered *Registry) []prompts.RecentResult {
	calls := storedCalls(key, history, offered, MaxRecent)
	if len(calls) > MaxRecent {
		calls = calls[:MaxRecent]
	}
	out := make([]prompts.RecentResult, len(calls))
	for i, c := range calls {
		args := strings.Join(strings.Fields(c.call.Arguments), " ")
		if args == "" {
			args = "{}"
		}
		out[i] = prompts.RecentResult{Ref: c.ref, Tool: c.call.Name, Arguments: textcut.BytesMark(args, MaxRecentArguments, textcut.Truncated)}
	}
	return out
}

// recent is the executor prompt's list of earlier tool results of p's thread: none
// when the recall tool is not offered.
func recent(p conversation.Prompt, offered *Registry) []prompts.RecentResult {
	if _, _, ok := offered.Lookup(RecallToolName); !ok {
		return nil
	}
	return recentResults(p.Key, p.History, offered)
}

// recallArgs are the recall tool's arguments.
type recallArgs struct {
	Ref string `json:"ref" required:"true" description:"the reference of an earlier tool result, as listed under Earlier tool results (e.g. r1a2b3c4d)"`
}

// Recall returns the recall tool: {"ref": "r1a2b3c4d"} returns the stored result of
// the earlier tool call with that reference in the same thread (the executor's
// system prompt lists the recent ones), at most MaxRecallResult bytes, after a line
// naming the tool and its arguments. It only reads the turn's history, never another
// thread's, and only results of tools the channel is offered (TOOL_POLICY); it is
// ReadOnly, and Untrusted because a recalled result may be content from outside, so
// it reaches the model as trust="untrusted" data. Errors, returned to the model: an
// unknown reference, or a call outside a turn of the executor.
func Recall() (ToolSpec, Tool) {
	spec, tool, err := InferTool(RecallToolName,
		"Fetch the stored result of a tool call made in an earlier turn of this thread, by the reference listed under \"Earlier tool results\". Use it instead of calling the same tool again with the same arguments.",
		func(ctx context.Context, a recallArgs) (string, error) {
			scope, ok := ctx.Value(recallKey{}).(recallScope)
			if !ok {
				return "", fmt.Errorf("no earlier tool results are available here")
			}
			ref := strings.TrimSpace(a.Ref)
			calls := storedCalls(scope.key, scope.history, scope.offered, 0)
			for _, c := range calls {
				if c.ref == ref {
					return textcut.BytesMark(fmt.Sprintf("Result of %s %s (from an earlier turn):\n%s", c.call.Name, strings.Join(strings.Fields(c.call.Arguments), " "), c.call.Result), MaxRecallResult, textcut.Truncated), nil
				}
			}
			if len(calls) == 0 {
				return "", fmt.Errorf("unknown reference %q: this thread has no earlier tool results to recall; call the tool instead", ref)
			}
			return "", fmt.Errorf("unknown reference %q: it is not an earlier tool result of this thread; use a reference listed under \"Earlier tool results\", or call the tool instead", ref)
		})
	if err != nil {
		panic(err) // a mistake in the schema above
	}
	spec.Category = DefaultCategory
	spec.ReadOnly = true
	spec.Untrusted = true
	return spec, tool
}
