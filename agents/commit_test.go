package agents

// The commit loop is unexported; its tests run inside the package. The planner's and
// the WorkflowAgent's tests (package agents_test) cover it through their methods.

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/testkit/logtest"
	"github.com/threadwright/threadwright/testkit/openaitest"
)

const noteTool = "commit_note"

// loopFixture is a CommitLoop for commit_note against a fake OpenAI server; note is
// the text the accepted call committed.
type loopFixture struct {
	srv  *openaitest.Server
	loop CommitLoop
	logs *logtest.Buffer
	note string
}

func newLoopFixture(tb testing.TB, reminders int) *loopFixture {
	tb.Helper()
	srv := openaitest.NewServer()
	tb.Cleanup(srv.Close)
	logs := new(logtest.Buffer)
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f := &loopFixture{srv: srv, logs: logs}
	f.loop = CommitLoop{
		Client: NewClient(ClientConfig{BaseURL: srv.URL(), APIKey: "sk-test", MaxRetries: -1, Logger: log}),
		Model:  "gpt-test", Prompts: orPrompts(nil),
		Tool: openai.FunctionDefinition{
			Name: noteTool, Description: "Save the note.",
			Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		},
		Accept: func(args json.RawMessage) error {
			var in struct{ Text string }
			if err := json.Unmarshal(args, &in); err != nil {
				return err
			}
			if strings.TrimSpace(in.Text) == "" {
				return errors.New(`"text" is empty`)
			}
			f.note = in.Text
			return nil
		},
		Reminders: reminders, Log: log, Warning: "model did not commit its work",
		ErrPrefix: "agents: test", UserMessage: NotSaved("the note"),
	}
	return f
}

// withResearch gives the loop a lookup tool, which runs answer, for the first
// steps-1 calls.
func (f *loopFixture) withResearch(steps int, answer func(ctx context.Context) (string, error)) {
	reg := NewRegistry()
	reg.MustRegister(ToolSpec{Name: "lookup", Description: "Look it up."},
		ToolFunc(func(ctx context.Context, _ json.RawMessage) (string, error) { return answer(ctx) }))
	f.loop.research = toolRunner{registry: reg, timeout: time.Minute, maxParallel: 2, maxResult: 1 << 10}
	f.loop.toolSteps = steps
}

func (f *loopFixture) run(ctx context.Context) (CommitResult, error) {
	return f.loop.Run(ctx, []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "Write a note."}})
}

// commits runs the loop, which must commit "Ship on Friday." in calls model calls
// that used usage, and returns the result and the requests.
func (f *loopFixture) commits(tb testing.TB, calls int, usage conversation.Usage) (CommitResult, []openaitest.Request) {
	tb.Helper()
	res, err := f.run(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	if f.note != "Ship on Friday." || res.Calls != calls || res.Usage != usage {
		tb.Errorf("note %q, result %+v; want %d calls, usage %+v", f.note, res, calls, usage)
	}
	reqs := f.srv.Requests()
	if len(reqs) != calls {
		tb.Fatalf("%d requests, want %d", len(reqs), calls)
	}
	return res, reqs
}

func noteCall(id, args string) openaitest.Response {
	return openaitest.Response{
		ToolCalls: []openaitest.ToolCall{{ID: id, Name: noteTool, Arguments: args}},
		Usage:     openaitest.Usage{PromptTokens: 100, CompletionTokens: 20},
	}
}

func lookupCall(id string) openaitest.Response {
	return openaitest.Response{
		ToolCalls: []openaitest.ToolCall{{ID: id, Name: "lookup", Arguments: `{}`}},
		Usage:     openaitest.Usage{PromptTokens: 50, CompletionTokens: 5},
	}
}

func plainText(s string) openaitest.Response {
	return openaitest.Response{Text: s, Usage: openaitest.Usage{PromptTokens: 90, CompletionTokens: 10}}
}

// toolChoiceOf returns the request's tool_choice as JSON, object keys sorted.
func toolChoiceOf(tb testing.TB, r openaitest.Request) string {
	tb.Helper()
	b, err := json.Marshal(r.Chat.ToolChoice)
	if err != nil {
		tb.Fatal(err)
	}
	return string(b)
}

const forcedNote = `{"function":{"name":"commit_note"},"type":"function"}`

// checkForced fails unless r offers commit_note alone and forces it.
func checkForced(tb testing.TB, r openaitest.Request) {
	tb.Helper()
	if got := r.ToolNames(); !reflect.DeepEqual(got, []string{noteTool}) {
		tb.Errorf("request %d offers %v, want commit_note alone", r.N, got)
	}
	if got := toolChoiceOf(tb, r); got != forcedNote {
		tb.Errorf("request %d: tool_choice = %s, want %s", r.N, got, forcedNote)
	}
}

// hasAll fails unless s, which is what, contains every one of wants.
func hasAll(tb testing.TB, what, s string, wants ...string) {
	tb.Helper()
	for _, w := range wants {
		if !strings.Contains(s, w) {
			tb.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

func TestCommitLoop(t *testing.T) {
	t.Run("CommitsOnTheFirstCall", func(t *testing.T) {
		f := newLoopFixture(t, 2)
		f.srv.Push(noteCall("call_1", `{"text": "Ship on Friday."}`))
		res, reqs := f.commits(t, 1, conversation.Usage{PromptTokens: 100, CompletionTokens: 20})
		if res.Call.ID != "call_1" || res.Call.Function.Name != noteTool {
			t.Errorf("accepted call = %+v", res.Call)
		}
		checkForced(t, reqs[0])
		if reqs[0].Chat.Model != "gpt-test" || reqs[0].LastUserMessage() != "Write a note." {
			t.Errorf("request = %s", reqs[0].Body)
		}
		if logs := f.logs.String(); strings.Contains(logs, "did not commit") {
			t.Errorf("logs = %s", logs)
		}
	})

	t.Run("BadArgumentsThenCommit", func(t *testing.T) {
		f := newLoopFixture(t, 2)
		f.srv.Push(noteCall("call_1", `{"text": " "}`), noteCall("call_2", `{"text": "Ship on Friday."}`))
		res, reqs := f.commits(t, 2, conversation.Usage{PromptTokens: 200, CompletionTokens: 40})
		if res.Call.ID != "call_2" {
			t.Errorf("accepted call = %+v", res.Call)
		}
		checkForced(t, reqs[1])
		msgs := reqs[1].Chat.Messages
		if len(msgs) != 4 || msgs[1].Role != openai.ChatMessageRoleAssistant || len(msgs[1].ToolCalls) != 1 {
			t.Fatalf("second request's messages = %+v, want the task, the rejected call, its result, the reminder", msgs)
		}
		if res := reqs[1].ToolResults(); len(res) != 1 || res[0].ToolCallID != "call_1" || res[0].Content != `error: "text" is empty. Nothing was saved.` {
			t.Errorf("tool results = %+v", res)
		}
		reminder := reqs[1].LastUserMessage()
		hasAll(t, "the reminder", reminder, `That was not saved: "text" is empty.`, "Call commit_note now. Do not answer in plain text.")
		if strings.Contains(reminder, "last try") {
			t.Errorf("reminder = %q, but 2 of 3 is not the last try", reminder)
		}
		hasAll(t, "log", f.logs.String(), `msg="model did not commit its work"`, "tool=commit_note", "try=1", "tries=3", `problem="\"text\" is empty"`)
	})

	t.Run("NoToolCall", func(t *testing.T) {
		f := newLoopFixture(t, 2)
		f.srv.Push(plainText("Ship on Friday."), noteCall("", `{"text": "Ship on Friday."}`))
		_, reqs := f.commits(t, 2, conversation.Usage{PromptTokens: 190, CompletionTokens: 30})
		req := reqs[1]
		checkForced(t, req)
		msgs := req.Chat.Messages
		if len(msgs) != 3 || msgs[1].Role != openai.ChatMessageRoleAssistant || msgs[1].Content != "Ship on Friday." {
			t.Fatalf("second request's messages = %+v, want the task, the answer in text, the reminder", msgs)
		}
		hasAll(t, "the reminder", req.LastUserMessage(),
			"You answered without calling commit_note, so nothing was saved.",
			"Call commit_note now; if the text you wrote is what you meant, pass it to the function unchanged.")
		hasAll(t, "log", f.logs.String(), `problem="answered without calling the function"`, `content="Ship on Friday."`)
	})

	t.Run("RemindersExhausted", func(t *testing.T) {
		f := newLoopFixture(t, 1)
		f.srv.Push(plainText("One."), noteCall("", `{"text": ""}`))
		res, err := f.run(context.Background())
		var ce *CommitError
		if !errors.As(err, &ce) || !errors.Is(err, ErrNoCommit) {
			t.Fatalf("err = %v, want a *CommitError", err)
		}
		if ce.Tool != noteTool || ce.Tries != 2 || ce.Problem != `"text" is empty` {
			t.Errorf("CommitError = %+v", ce)
		}
		if want := "The model did not save the note after 2 tries, so nothing was changed. Please try again."; ce.UserMessage() != want {
			t.Errorf("UserMessage = %q, want %q", ce.UserMessage(), want)
		}
		if res.Calls != 2 || res.Call.ID != "" || res.Usage.PromptTokens != 190 {
			t.Errorf("result = %+v, want both calls counted", res)
		}
		reqs := f.srv.Requests()
		if len(reqs) != 2 {
			t.Fatalf("%d requests, want 2 (no reminder after the last try)", len(reqs))
		}
		hasAll(t, "the reminder", reqs[1].LastUserMessage(), "This is the last try.")
		hasAll(t, "log", f.logs.String(), "try=1 tries=2", "try=2 tries=2")
	})

	t.Run("ExploringThenForced", func(t *testing.T) {
		f := newLoopFixture(t, 2)
		var runs atomic.Int32
		f.withResearch(3, func(context.Context) (string, error) {
			runs.Add(1)
			return "Friday is free.", nil
		})
		// Two calls offer lookup; the third offers commit_note alone, forced.
		f.srv.Handle(func(r openaitest.Request) openaitest.Response {
			if len(r.Chat.Tools) == 1 {
				return noteCall("", `{"text": "Ship on Friday."}`)
			}
			return lookupCall("")
		})
		_, reqs := f.commits(t, 3, conversation.Usage{PromptTokens: 200, CompletionTokens: 30})
		if runs.Load() != 2 {
			t.Errorf("lookup ran %d times, want 2", runs.Load())
		}
		for _, r := range reqs[:2] {
			if got := r.ToolNames(); !reflect.DeepEqual(got, []string{"lookup", noteTool}) || toolChoiceOf(t, r) != `"required"` {
				t.Errorf("request %d: tools %v, tool_choice %s; want lookup and commit_note, \"required\"", r.N, got, toolChoiceOf(t, r))
			}
		}
		checkForced(t, reqs[2])
		results := reqs[2].ToolResults()
		if len(results) != 2 || results[0].Content != ToolOutput("lookup", TrustInternal, "Friday is free.") || results[1].Content != ToolOutput("lookup", TrustInternal, "Friday is free.") {
			t.Errorf("tool results = %+v, want lookup's answer twice", results)
		}
		if strings.Contains(reqs[2].LastUserMessage(), "not saved") || strings.Contains(f.logs.String(), "did not commit") {
			t.Errorf("research counted as a failed try: %q", reqs[2].LastUserMessage())
		}
		hasAll(t, "log", f.logs.String(), `msg="tool call" tool=lookup`)
	})

	t.Run("Cancel", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			// setup scripts the model and arranges for cancel to be called.
			setup func(f *loopFixture, cancel context.CancelFunc)
		}{
			{"DuringACall", func(f *loopFixture, cancel context.CancelFunc) {
				f.srv.Handle(func(openaitest.Request) openaitest.Response {
					cancel()
					return openaitest.Response{Text: "late", Delay: time.Hour} // ends with the request
				})
			}},
			{"AfterAMiss", func(f *loopFixture, cancel context.CancelFunc) {
				accept := f.loop.Accept
				f.loop.Accept = func(args json.RawMessage) error {
					cancel()
					return accept(args)
				}
				f.srv.Handle(func(openaitest.Request) openaitest.Response { return noteCall("", `{"text": ""}`) })
			}},
			{"DuringResearch", func(f *loopFixture, cancel context.CancelFunc) {
				f.withResearch(3, func(ctx context.Context) (string, error) {
					cancel()
					<-ctx.Done()
					return "", ctx.Err()
				})
				f.srv.Handle(func(openaitest.Request) openaitest.Response { return lookupCall("") })
			}},
		} {
			t.Run(tc.name, func(t *testing.T) {
				f := newLoopFixture(t, 2)
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				tc.setup(f, cancel)
				start := time.Now()
				res, err := f.run(ctx)
				if d := time.Since(start); d > 10*time.Second {
					t.Errorf("the loop ended %s after the cancellation", d)
				}
				if !errors.Is(err, context.Canceled) || errors.Is(err, ErrNoCommit) || !strings.HasPrefix(err.Error(), "agents: test: ") {
					t.Errorf("err = %v, want ctx's, prefixed", err)
				}
				if n := len(f.srv.Requests()); n != 1 || res.Calls != 1 {
					t.Errorf("%d requests, %d calls counted; want no call after the cancellation", n, res.Calls)
				}
			})
		}
	})
}
