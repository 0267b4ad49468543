package cassette

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/conversation"
)

// Version is the version of the cassette format that this package writes and reads.
const Version = 1

// Cassette is a file of recorded chat completions: every request the program made
// during the runs of the eval cases, and the response it got.
type Cassette struct {
	Version int `json:"version"`
	// Recorded is when the recording ended.
	Recorded time.Time `json:"recorded"`
	// Model and SmallModel are OPENAI_MODEL and OPENAI_SMALL_MODEL of the recording:
	// a replay runs with them, since every request names its model.
	Model      string `json:"model"`
	SmallModel string `json:"small_model"`
	// Interactions are the calls, ordered by case, run and sequence.
	Interactions []Interaction `json:"interactions"`
}

// Interaction is one recorded chat completion.
type Interaction struct {
	// Case and Run name the run of an eval case that made the call (Run from 1).
	Case string `json:"case"`
	Run  int    `json:"run"`
	// Seq numbers the run's calls from 1, in the order they were made.
	Seq int `json:"seq"`
	// Request is the chat completion request as the program made it (OpenAI's
	// request body without stream and stream_options, which the client adds).
	Request json.RawMessage `json:"request"`
	// Response is the completion the call returned; Error, instead, its error.
	Response *Response `json:"response,omitempty"`
	Error    string    `json:"error,omitempty"`
}

// Response is a recorded completion (agents.Completion): the assistant message's
// content and tool calls, choices[0].finish_reason, the usage and the model that
// answered.
type Response struct {
	Content          string              `json:"content,omitempty"`
	ToolCalls        []openai.ToolCall   `json:"tool_calls,omitempty"`
	FinishReason     openai.FinishReason `json:"finish_reason,omitempty"`
	Truncated        bool                `json:"truncated,omitempty"`
	PromptTokens     int                 `json:"prompt_tokens"`
	CompletionTokens int                 `json:"completion_tokens"`
	Model            string              `json:"model,omitempty"`
}

// responseOf records c.
func responseOf(c agents.Completion) *Response {
	return &Response{Content: c.Content, ToolCalls: c.ToolCalls, FinishReason: c.FinishReason, Truncated: c.Truncated,
		PromptTokens: c.Usage.PromptTokens, CompletionTokens: c.Usage.CompletionTokens, Model: c.Model}
}

// completion is the recorded completion as the client returned it.
func (r *Response) completion() agents.Completion {
	return agents.Completion{Content: r.Content, ToolCalls: slices.Clone(r.ToolCalls), FinishReason: r.FinishReason, Truncated: r.Truncated,
		Usage: conversation.Usage{PromptTokens: r.PromptTokens, CompletionTokens: r.CompletionTokens}, Model: r.Model, Attempts: 1}
}

// maxFile bounds a cassette file, in bytes.
const maxFile = 1 << 30

// Open reads the cassette at path. Errors: the file's, a file that is not a cassette,
// or one of another version.
func Open(path string) (*Cassette, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("cassette: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("cassette: %s: %w", path, err)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("cassette: %s: larger than 1 GiB", path)
	}
	var c Cassette
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("cassette: %s: not a cassette: %w", path, err)
	}
	if c.Version != Version {
		return nil, fmt.Errorf("cassette: %s: version %d; this threadwright reads version %d", path, c.Version, Version)
	}
	for i, in := range c.Interactions {
		if in.Case == "" || in.Run < 1 || len(in.Request) == 0 || (in.Response == nil) == (in.Error == "") {
			return nil, fmt.Errorf("cassette: %s: interactions[%d]: needs case, run, request and a response or an error", path, i)
		}
	}
	return &c, nil
}

// Save writes c to path, through a temporary file renamed over it, so that a
// cassette is never half written. Interactions are sorted by case, run and sequence.
func (c *Cassette) Save(path string) error {
	slices.SortStableFunc(c.Interactions, func(a, b Interaction) int {
		return cmpInteraction(a, b)
	})
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("cassette: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".cassette-*")
	if err != nil {
		return fmt.Errorf("cassette: %w", err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("cassette: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("cassette: %w", err)
	}
	return nil
}

func cmpInteraction(a, b Interaction) int {
	if c := strings.Compare(a.Case, b.Case); c != 0 {
		return c
	}
	if a.Run != b.Run {
		return a.Run - b.Run
	}
	return a.Seq - b.Seq
}
