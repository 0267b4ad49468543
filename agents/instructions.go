package agents

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"
)

// MaxInstructionsBytes bounds one executor instructions file (EXECUTOR_INSTRUCTIONS,
// EXECUTOR_INSTRUCTIONS_CHANNELS): 16 KiB. The text is sent with every model call of
// every turn, so a larger file is refused at start-up rather than cut.
const MaxInstructionsBytes = 16 << 10

// ErrInvalidInstructions means an executor instructions file is unreadable, too large
// (over MaxInstructionsBytes), not UTF-8 text, or named by a malformed channel list;
// the error says which file or pair and why.
var ErrInvalidInstructions = errors.New("agents: invalid executor instructions")

// Instructions are a deployment's own guidance for the executor (docs/tools.md, "Executor
// instructions"), such as its workflow patterns: which tool chain fits which kind of
// question. They are added to the executor's system prompt (prompts.ExecutorSystem)
// and to the planner's (prompts.PlannerSystem). A nil *Instructions adds nothing.
type Instructions struct {
	// Default applies in every channel without its own text ("" for none).
	Default string
	// Channels maps a Slack channel id to the text used there instead of Default.
	Channels map[string]string
}

// For returns the instructions of channelID (for an assistant thread, the channel the
// person views: conversation.Prompt.PolicyChannel): its own, else Default, else "".
func (in *Instructions) For(channelID string) string {
	if in == nil {
		return ""
	}
	if s, ok := in.Channels[channelID]; ok {
		return s
	}
	return in.Default
}

// LoadInstructions reads the executor instructions: file (EXECUTOR_INSTRUCTIONS, ""
// for none) is the default, and channels (EXECUTOR_INSTRUCTIONS_CHANNELS, see
// ParseChannelFiles) names per-channel files. It returns nil when both are empty.
// Errors: ErrInvalidInstructions, naming the file.
func LoadInstructions(file, channels string) (*Instructions, error) {
	files, err := ParseChannelFiles(channels)
	if err != nil {
		return nil, err
	}
	if file == "" && len(files) == 0 {
		return nil, nil
	}
	in := &Instructions{}
	if file != "" {
		if in.Default, err = readInstructions(file); err != nil {
			return nil, err
		}
	}
	if len(files) > 0 {
		in.Channels = make(map[string]string, len(files))
		for ch, f := range files {
			if in.Channels[ch], err = readInstructions(f); err != nil {
				return nil, fmt.Errorf("channel %s: %w", ch, err)
			}
		}
	}
	return in, nil
}

// readInstructions reads one instructions file, trimmed, and checks its bounds.
func readInstructions(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalidInstructions, err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxInstructionsBytes+1))
	if err != nil {
		return "", fmt.Errorf("%w: read %s: %w", ErrInvalidInstructions, file, err)
	}
	if len(data) > MaxInstructionsBytes {
		return "", fmt.Errorf("%w: %s is larger than %d bytes (16 KiB): shorten it", ErrInvalidInstructions, file, MaxInstructionsBytes)
	}
	if !utf8.Valid(data) {
		return "", fmt.Errorf("%w: %s is not UTF-8 text", ErrInvalidInstructions, file)
	}
	return strings.TrimSpace(string(data)), nil
}

// ParseChannelFiles reads per-channel files written as
// "C123:/etc/tw/support.md,C456:/etc/tw/eng.md" (EXECUTOR_INSTRUCTIONS_CHANNELS, the
// shape of STRATEGY_CHANNELS): comma-separated pairs of a Slack channel id and a file
// path, split at the first ":", spaces allowed around each part. An empty s gives nil.
// Errors (ErrInvalidInstructions): a pair without ":", an empty channel id or path,
// or a channel given twice.
func ParseChannelFiles(s string) (map[string]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	pairs, bad := ChannelPairs(s)
	if bad != "" {
		return nil, fmt.Errorf("%w: channel file %q: want CHANNEL_ID:PATH", ErrInvalidInstructions, bad)
	}
	out := map[string]string{}
	for _, p := range pairs {
		ch, file := p[0], p[1]
		if _, dup := out[ch]; dup {
			return nil, fmt.Errorf("%w: channel %s is given two files", ErrInvalidInstructions, ch)
		}
		out[ch] = file
	}
	return out, nil
}

// ChannelPairs splits s, comma-separated "CHANNEL_ID:VALUE" pairs
// (EXECUTOR_INSTRUCTIONS_CHANNELS, and STRATEGY_CHANNELS of package agents/planner),
// into its [channel id, value] pairs in order: split at the first ":", each part
// trimmed, empty entries skipped. bad is the first entry (trimmed) without ":" or with
// an empty part; then pairs is nil.
func ChannelPairs(s string) (pairs [][2]string, bad string) {
	for entry := range strings.SplitSeq(s, ",") {
		entry = strings.TrimSpace(entry)
		if entry == "" {
			continue
		}
		ch, value, ok := strings.Cut(entry, ":")
		ch, value = strings.TrimSpace(ch), strings.TrimSpace(value)
		if !ok || ch == "" || value == "" {
			return nil, entry
		}
		pairs = append(pairs, [2]string{ch, value})
	}
	return pairs, ""
}
