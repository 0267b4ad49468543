package emulator

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Streaming (https://docs.slack.dev/reference/methods/chat.startStream): the
// bot starts a message, appends markdown and chunks to it (text, blocks, task
// cards and a plan title) and stops it.

// streamAPI answers chat.startStream, chat.appendStream and chat.stopStream.
// Each runs with the lock held.
type streamAPI struct {
	ws *workspace
	ev *eventsAPI
	// agent holds the sessions chat.stopStream sets (its session_status).
	agent *agentAPI

	refuseTasks bool // guarded by ws.mu; see RefuseTaskChunks
	// expiry is how long a stream lives after chat.startStream (guarded by ws.mu;
	// see SetStreamExpiry).
	expiry time.Duration
	// expireAt counts, by method, the next calls that find their stream expired
	// (guarded by ws.mu; see ExpireStreamAt).
	expireAt map[string]int
}

// DefaultStreamExpiry is how long a stream lives after chat.startStream: streams are
// observed to expire about five minutes after they start, and later calls fail with
// message_not_in_streaming_state (docs.slack.dev/ai/agent-sessions; Vercel's Chat SDK
// rotates to a fresh message at four minutes for this reason).
const DefaultStreamExpiry = 5 * time.Minute

// SetStreamExpiry sets how long a stream lives after chat.startStream, by Config.Now
// (d <= 0: DefaultStreamExpiry). A stream past it is no longer streaming: its text
// stays, and chat.appendStream and chat.stopStream fail with
// message_not_in_streaming_state, as Slack's do.
func (a *streamAPI) SetStreamExpiry(d time.Duration) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	a.expiry = d
}

// ExpireStreamAt makes the next call of method (chat.appendStream or
// chat.stopStream) find its stream expired, as if SetStreamExpiry's time had passed
// since chat.startStream just before it: the message keeps its text and stops
// streaming, and the call fails with message_not_in_streaming_state. Calls queue.
func (a *streamAPI) ExpireStreamAt(method string) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	if a.expireAt == nil {
		a.expireAt = map[string]int{}
	}
	a.expireAt[method]++
}

// methods is the streaming family of the Web API.
func (a *streamAPI) methods() map[string]method {
	return map[string]method{
		"chat.startStream":  {handle: a.chatStartStream},
		"chat.appendStream": {handle: a.chatAppendStream},
		"chat.stopStream":   {handle: a.chatStopStream},
	}
}

// streamChunk is an element of the chunks argument of the chat.*Stream methods.
type streamChunk struct {
	Type   string          `json:"type"`
	Text   string          `json:"text"`
	Blocks json.RawMessage `json:"blocks"`
	// task_update (and plan_update's Title).
	ID      string       `json:"id"`
	Title   *string      `json:"title"`
	Status  string       `json:"status"`
	Details string       `json:"details"`
	Output  string       `json:"output"`
	Sources []TaskSource `json:"sources"`
}

// Task limits the emulator enforces (Slack's SDK types document 256 characters for
// details and output).
const (
	MaxTaskTextLength = 256
	// taskStatuses are the statuses task_update accepts.
	taskStatuses = "pending in_progress complete error"
)

// streamContent is what one chat.*Stream call adds to its message.
type streamContent struct {
	text      string
	blocks    []json.RawMessage
	tasks     []Task
	planTitle *string
}

// apply adds c to m: text, blocks, and tasks (each replacing the task of its id, or
// added after the others).
func (c streamContent) apply(m *record) {
	m.Text += c.text
	m.Blocks = appendBlocks(m.Blocks, c.blocks)
	if c.planTitle != nil {
		m.PlanTitle = *c.planTitle
	}
	for _, t := range c.tasks {
		m.TaskUpdates = append(m.TaskUpdates, t)
		i := slices.IndexFunc(m.Tasks, func(o Task) bool { return o.ID == t.ID })
		if i < 0 {
			m.Tasks = append(m.Tasks, t)
			continue
		}
		m.Tasks[i] = t
	}
}

// RefuseTaskChunks makes chat.startStream refuse task_display_mode and every
// chat.*Stream call refuse task_update and plan_update chunks, with
// "invalid_chunks", as a workspace without thinking steps does; false accepts them
// again.
func (a *streamAPI) RefuseTaskChunks(refuse bool) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	a.refuseTasks = refuse
}

// readStreamContent reads markdown_text and chunks: the text to append, the
// blocks chunks to add, and the tasks. It refuses what Slack refuses: an unknown
// chunk type, a task without id or title or with an unknown status, a source
// that is not a URL source with both url and text, an empty plan title.
func (a *streamAPI) readStreamContent(r *request) (streamContent, error) {
	var c streamContent
	text := r.get("markdown_text")
	if n := runes(text); n > MaxStreamTextLength {
		return c, errCode("msg_too_long", fmt.Sprintf("[ERROR] markdown_text is %d characters; the limit is %d", n, MaxStreamTextLength))
	}
	raw := r.get("chunks")
	if raw == "" {
		c.text = text
		return c, nil
	}
	var chunks []streamChunk
	if err := json.Unmarshal([]byte(raw), &chunks); err != nil {
		return c, errCode("invalid_chunks", "[ERROR] chunks must be a JSON array of objects")
	}
	var b strings.Builder
	b.WriteString(text)
	for i, ch := range chunks {
		switch ch.Type {
		case "markdown_text":
			b.WriteString(ch.Text)
		case "blocks":
			if err := checkBlocks(string(ch.Blocks)); err != nil {
				return c, err
			}
			c.blocks = append(c.blocks, ch.Blocks)
		case "task_update":
			if a.refuseTasks {
				return c, errCode("invalid_chunks", fmt.Sprintf("[ERROR] chunks[%d]: task_update is not supported", i))
			}
			t, err := checkTask(i, ch)
			if err != nil {
				return c, err
			}
			c.tasks = append(c.tasks, t)
		case "plan_update":
			if a.refuseTasks {
				return c, errCode("invalid_chunks", fmt.Sprintf("[ERROR] chunks[%d]: plan_update is not supported", i))
			}
			if ch.Title == nil || strings.TrimSpace(*ch.Title) == "" {
				return c, errCode("invalid_chunks", fmt.Sprintf("[ERROR] chunks[%d]: plan_update needs a title", i))
			}
			c.planTitle = ch.Title
		default:
			return c, errCode("invalid_chunks", fmt.Sprintf("[ERROR] unknown chunk type %q", ch.Type))
		}
	}
	if n := runes(b.String()); n > MaxStreamTextLength {
		return c, errCode("msg_too_long", fmt.Sprintf("[ERROR] streamed text is %d characters; the limit is %d", n, MaxStreamTextLength))
	}
	c.text = b.String()
	return c, nil
}

// checkTask returns the task of task_update chunk ch (chunks[i]), or Slack's
// refusal.
func checkTask(i int, ch streamChunk) (Task, error) {
	bad := func(why string) (Task, error) {
		return Task{}, errCode("invalid_chunks", fmt.Sprintf("[ERROR] chunks[%d]: task_update %s", i, why))
	}
	switch {
	case strings.TrimSpace(ch.ID) == "":
		return bad("needs an id")
	case ch.Title == nil || strings.TrimSpace(*ch.Title) == "":
		return bad("needs a title")
	case !slices.Contains(strings.Fields(taskStatuses), ch.Status):
		return bad(fmt.Sprintf("has an unknown status %q (want one of %s)", ch.Status, taskStatuses))
	case runes(ch.Details) > MaxTaskTextLength || runes(ch.Output) > MaxTaskTextLength:
		return bad(fmt.Sprintf("details and output are limited to %d characters", MaxTaskTextLength))
	}
	for j, src := range ch.Sources {
		switch {
		case src.Type != "url":
			return bad(fmt.Sprintf("sources[%d] has type %q; want \"url\"", j, src.Type))
		case strings.TrimSpace(src.URL) == "":
			return bad(fmt.Sprintf("sources[%d] needs a url", j))
		case strings.TrimSpace(src.Text) == "":
			return bad(fmt.Sprintf("sources[%d] needs a text", j))
		}
	}
	return Task{ID: ch.ID, Title: *ch.Title, Status: ch.Status, Details: ch.Details, Output: ch.Output, Sources: ch.Sources}, nil
}

// appendBlocks concatenates JSON arrays of blocks.
func appendBlocks(current json.RawMessage, more []json.RawMessage) json.RawMessage {
	if len(more) == 0 {
		return current
	}
	var all []json.RawMessage
	_ = json.Unmarshal(current, &all) // current was validated when stored
	for _, m := range more {
		var bs []json.RawMessage
		_ = json.Unmarshal(m, &bs) // validated by checkBlocks
		all = append(all, bs...)
	}
	out, _ := json.Marshal(all)
	return out
}

// chatStartStream implements chat.startStream
// (https://docs.slack.dev/reference/methods/chat.startStream): a bot message
// that grows with chat.appendStream until chat.stopStream. Outside IMs it
// requires recipient_user_id and recipient_team_id. It takes no metadata (that
// comes with chat.stopStream). Starting a stream delivers a message event like
// chat.postMessage; appends do not.
func (a *streamAPI) chatStartStream(r *request) (object, error) {
	ch, err := channelArg(a.ws, r.get("channel"))
	if err != nil {
		return nil, err
	}
	if ch.Type != ChannelTypeIM {
		if r.get("recipient_user_id") == "" {
			return nil, errCode("missing_recipient_user_id")
		}
		if r.get("recipient_team_id") == "" {
			return nil, errCode("missing_recipient_team_id")
		}
	}
	mode := r.get("task_display_mode")
	switch {
	case mode != "" && a.refuseTasks:
		return nil, errCode("invalid_arguments", "[ERROR] task_display_mode is not supported")
	case mode != "" && mode != "timeline" && mode != "plan":
		return nil, errCode("invalid_arguments", fmt.Sprintf("[ERROR] unknown task_display_mode %q", mode))
	}
	content, err := a.readStreamContent(r)
	if err != nil {
		return nil, err
	}
	m := a.ws.botRecordLocked(ch)
	m.Streaming, m.TaskDisplayMode, m.streamed, m.streamStart = true, mode, true, a.ws.cfg.Now()
	content.apply(m)
	ch.reply(m, r.get("thread_ts"), false)
	a.ev.postLocked(ch, m)
	return object{"channel": ch.ID, "ts": m.TS}, nil
}

// streamingMessageLocked finds the bot's message that is still streaming, for a
// call of method.
func (a *streamAPI) streamingMessageLocked(r *request, method string) (*channelState, *record, error) {
	ch, m, err := ownMessageArg(a.ws, r, "message_not_owned_by_app")
	if err != nil {
		return nil, nil, err
	}
	expiry := a.expiry
	if expiry <= 0 {
		expiry = DefaultStreamExpiry
	}
	expired := m.Streaming && a.ws.cfg.Now().Sub(m.streamStart) >= expiry
	if m.Streaming && a.expireAt[method] > 0 {
		a.expireAt[method]--
		expired = true
	}
	if expired {
		m.Streaming = false // expired: Slack ends the stream, keeping its text
	}
	if !m.Streaming {
		return nil, nil, errCode("message_not_in_streaming_state")
	}
	return ch, m, nil
}

// chatAppendStream implements chat.appendStream: markdown_text (and chunks)
// are appended to the streaming message.
func (a *streamAPI) chatAppendStream(r *request) (object, error) {
	ch, m, err := a.streamingMessageLocked(r, "chat.appendStream")
	if err != nil {
		return nil, err
	}
	if r.get("markdown_text") == "" && r.get("chunks") == "" {
		return nil, errCode("invalid_arguments", "[ERROR] missing required field: markdown_text")
	}
	content, err := a.readStreamContent(r)
	if err != nil {
		return nil, err
	}
	a.ws.changeLocked(ch, m, func(m *record) {
		content.apply(m)
		m.streamAppends++
	})
	return object{"channel": ch.ID, "ts": m.TS}, nil
}

// chatStopStream implements chat.stopStream
// (https://docs.slack.dev/reference/methods/chat.stopStream): optional last
// markdown_text, chunks or blocks, and the message's metadata, then the message is
// final, and the thread's agent session, if any, takes session_status ("active" by
// default; see agentAPI).
func (a *streamAPI) chatStopStream(r *request) (object, error) {
	ch, m, err := a.streamingMessageLocked(r, "chat.stopStream")
	if err != nil {
		return nil, err
	}
	status := cmp.Or(r.get("session_status"), "active")
	if err := checkSessionStatus("session_status", status); err != nil {
		return nil, err
	}
	content, err := a.readStreamContent(r)
	if err != nil {
		return nil, err
	}
	meta, err := readMetadata(r)
	if err != nil {
		return nil, err
	}
	var final json.RawMessage
	if raw := r.get("blocks"); raw != "" {
		if err := checkBlocks(raw); err != nil {
			return nil, err
		}
		final = json.RawMessage(raw)
	}
	a.ws.changeLocked(ch, m, func(m *record) {
		content.apply(m)
		if final != nil {
			m.Blocks = appendBlocks(m.Blocks, []json.RawMessage{final})
		}
		if meta != nil {
			m.Metadata = meta
		}
		m.Streaming = false
	})
	a.agent.streamStoppedLocked(ch.ID, cmp.Or(m.ThreadTS, m.TS), status)
	return object{"channel": ch.ID, "ts": m.TS, "message": a.ws.wireLocked(ch, m)}, nil
}
