package bot_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
)

// readSample reads bot/testdata/chunks/<name> (see its README for where each came from).
func readSample(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "chunks", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// shape is the JSON value's structure: object keys and their shapes, an array's
// element shape, or a scalar's kind.
func shape(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			out[k] = shape(e)
		}
		return out
	case []any:
		if len(v) == 0 {
			return []any{}
		}
		return []any{shape(v[0])}
	default:
		return reflect.TypeOf(v).String()
	}
}

func shapeOf(t *testing.T, raw []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return shape(v)
}

// The samples are slack-go's types exactly (no field it does not know), and what
// TaskChunks sends has the samples' shape.
func TestTaskChunksMatchSlackSamples(t *testing.T) {
	strict := func(name string, into any) {
		dec := json.NewDecoder(bytes.NewReader(readSample(t, name)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(into); err != nil {
			t.Errorf("%s is not slack-go's shape: %v", name, err)
		}
	}
	strict("task_update.json", &slack.TaskUpdateChunk{})
	strict("task_update_pending.json", &slack.TaskUpdateChunk{})
	strict("plan_update.json", &slack.PlanUpdateChunk{})
	strict("task_card_block.json", &slack.TaskCardBlock{})
	strict("plan_block.json", &slack.PlanBlock{})

	chunks := bot.TaskChunks("Compare the two releases",
		conversation.Task{ID: "call_1", Title: "fetch_url https://example.com/status", Status: conversation.TaskComplete,
			Output: "Status: all systems operational",
			Sources: []conversation.Source{
				{URL: "https://example.com/status", Text: "https://example.com/status"},
				{URL: "https://example.com/none"}, // no text: Slack refuses it, so it is left out
			}},
		conversation.Task{ID: "call_1", Title: "fetch_url https://example.com/status", Status: conversation.TaskPending})
	if len(chunks) != 3 {
		t.Fatalf("chunks = %d, want a plan_update and two task_update", len(chunks))
	}
	for i, name := range []string{"plan_update.json", "task_update.json", "task_update_pending.json"} {
		got, err := json.Marshal(chunks[i])
		if err != nil {
			t.Fatal(err)
		}
		if g, w := shapeOf(t, got), shapeOf(t, readSample(t, name)); !reflect.DeepEqual(g, w) {
			t.Errorf("chunk %d = %s\nshape %v, want %s's %v", i, got, g, name, w)
		}
	}
	got, _ := json.Marshal(chunks[1])
	if want := readSample(t, "task_update.json"); !jsonEqual(t, got, want) {
		t.Errorf("task_update = %s, want %s", got, want)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		t.Fatalf("not JSON: %s / %s", a, b)
	}
	return reflect.DeepEqual(x, y)
}

// rawChunk sends its JSON as it is, to show the emulator what Slack refuses.
type rawChunk json.RawMessage

func (c rawChunk) ChunkType() slack.StreamChunkType { return "raw" }
func (c rawChunk) MarshalJSON() ([]byte, error)     { return c, nil }

// The emulator takes the samples and refuses what Slack refuses; a stream started
// for tasks carries the display mode, the plan's title, the Stop card's blocks
// first, and each task's latest state with every update in order.
func TestTaskStreamThroughEmulator(t *testing.T) {
	h := startMessenger(t)
	root := h.say(t, "C0GENERAL", "compare the releases", "")
	key := conversation.Key{ChannelID: "C0GENERAL", ThreadTS: root}
	card := conversation.Card{Blocks: []conversation.Block{{Kind: conversation.BlockActions, Buttons: []conversation.Button{
		{Label: "Stop", Action: conversation.Action{Name: conversation.ActionStop, Channel: key.ChannelID, ThreadTS: root, Arg: "in-1"}}}}}}
	st, err := h.msg.StartTaskStream(h.ctx, key, "U0ALICE", conversation.Tag{}, conversation.TaskStreamOptions{Plan: true, PlanTitle: "Planning", Card: card})
	if err != nil {
		t.Fatal(err)
	}
	for _, status := range []conversation.TaskStatus{conversation.TaskPending, conversation.TaskInProgress, conversation.TaskComplete} {
		task := conversation.Task{ID: "call_1", Title: "fetch_url https://example.com", Status: status}
		if status == conversation.TaskComplete {
			task.Sources = []conversation.Source{{URL: "https://example.com", Text: "Example"}}
		}
		if err := st.UpdateTasks(h.ctx, "", task); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.UpdateTasks(h.ctx, "Compare the two releases"); err != nil {
		t.Fatal(err)
	}
	ts, _ := st.Stop(h.ctx, true)
	m, ok := h.emu.Message("C0GENERAL", ts)
	if !ok {
		t.Fatal("streamed message not found")
	}
	if m.TaskDisplayMode != "plan" || m.PlanTitle != "Compare the two releases" {
		t.Errorf("mode %q, plan title %q", m.TaskDisplayMode, m.PlanTitle)
	}
	var statuses []string
	for _, u := range m.TaskUpdates {
		statuses = append(statuses, u.Status)
	}
	if want := []string{"pending", "in_progress", "complete"}; !slices.Equal(statuses, want) {
		t.Errorf("task updates %v, want %v", statuses, want)
	}
	if len(m.Tasks) != 1 || m.Tasks[0].Status != "complete" || len(m.Tasks[0].Sources) != 1 || m.Tasks[0].Sources[0].URL != "https://example.com" {
		t.Errorf("tasks = %+v", m.Tasks)
	}
	if !strings.Contains(string(m.Blocks), `"actions"`) || !strings.Contains(string(m.Blocks), "Stop") {
		t.Errorf("blocks = %s, want the Stop button", m.Blocks)
	}

	// The samples themselves go through; their broken variants do not.
	_, live, err := h.api.StartStreamContext(h.ctx, "C0GENERAL", slack.MsgOptionTS(root),
		slack.MsgOptionRecipientUserID("U0ALICE"), slack.MsgOptionRecipientTeamID(h.emu.Config().TeamID))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"task_update.json", "task_update_pending.json", "plan_update.json", "blocks.json"} {
		if _, _, err := h.api.AppendStreamContext(h.ctx, "C0GENERAL", live, slack.MsgOptionChunks(rawChunk(readSample(t, name)))); err != nil {
			t.Errorf("sample %s refused: %v", name, err)
		}
	}
	bad := map[string]string{
		"unknown status":      `{"type":"task_update","id":"a","title":"t","status":"done"}`,
		"source without text": `{"type":"task_update","id":"a","title":"t","status":"complete","sources":[{"type":"url","url":"https://example.com","text":""}]}`,
		"source without url":  `{"type":"task_update","id":"a","title":"t","status":"complete","sources":[{"type":"url","url":"","text":"x"}]}`,
		"source not a url":    `{"type":"task_update","id":"a","title":"t","status":"complete","sources":[{"type":"file","url":"https://example.com","text":"x"}]}`,
		"no id":               `{"type":"task_update","title":"t","status":"pending"}`,
		"no title":            `{"type":"task_update","id":"a","status":"pending"}`,
		"output too long":     `{"type":"task_update","id":"a","title":"t","status":"pending","output":"` + strings.Repeat("x", 257) + `"}`,
		"plan without title":  `{"type":"plan_update","title":""}`,
		"unknown chunk":       `{"type":"thought","text":"x"}`,
	}
	names := make([]string, 0, len(bad))
	for n := range bad {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		_, _, err := h.api.AppendStreamContext(h.ctx, "C0GENERAL", live, slack.MsgOptionChunks(rawChunk(bad[n])))
		if err == nil || !strings.Contains(err.Error(), "invalid_chunks") {
			t.Errorf("%s: err = %v, want invalid_chunks", n, err)
		}
	}
	if _, _, err := h.api.StartStreamContext(h.ctx, "C0GENERAL", slack.MsgOptionTS(root), slack.MsgOptionTaskDisplayMode("grid"),
		slack.MsgOptionRecipientUserID("U0ALICE"), slack.MsgOptionRecipientTeamID(h.emu.Config().TeamID)); err == nil {
		t.Error("unknown task_display_mode accepted")
	}

	// A workspace that refuses task chunks refuses the task stream.
	h.emu.RefuseTaskChunks(true)
	if _, err := h.msg.StartTaskStream(h.ctx, key, "U0ALICE", conversation.Tag{}, conversation.TaskStreamOptions{}); err == nil {
		t.Error("StartTaskStream worked where task chunks are refused")
	}
}

// TestTaskStreamStartDefusesPlanTitle: the plan title a task stream starts with has
// its special mentions defused, like the plan titles sent later (TaskChunks).
func TestTaskStreamStartDefusesPlanTitle(t *testing.T) {
	h := startMessenger(t)
	root := h.say(t, "C0GENERAL", "tell everyone", "")
	key := conversation.Key{ChannelID: "C0GENERAL", ThreadTS: root}
	st, err := h.msg.StartTaskStream(h.ctx, key, "U0ALICE", conversation.Tag{}, conversation.TaskStreamOptions{Plan: true, PlanTitle: "Tell <!channel> the news"})
	if err != nil {
		t.Fatal(err)
	}
	ts, _ := st.Stop(h.ctx, true)
	m, ok := h.emu.Message("C0GENERAL", ts)
	if !ok {
		t.Fatal("streamed message not found")
	}
	if strings.Contains(m.PlanTitle, "<!channel>") {
		t.Errorf("plan title %q keeps the special mention", m.PlanTitle)
	}
}
