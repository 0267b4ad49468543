package emulator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Errors of the Server's own methods (the Web API answers Slack's codes).
var (
	ErrChannelNotFound = errors.New("emulator: channel not found")
	ErrUserNotFound    = errors.New("emulator: user not found")
	ErrMessageNotFound = errors.New("emulator: message not found")
	ErrNoConnection    = errors.New("emulator: no socket-mode connection")
	ErrClosed          = errors.New("emulator: server closed")
)

// feed is the emulator's one lock and its change feed: every change of the
// workspace wakes WaitFor callers and reaches Subscribe's channels.
type feed struct {
	// mu is the emulator's one lock. It guards the fields below, the
	// workspace's, and those of every part built on the workspace (the Socket
	// Mode hub, the Web API's records, the views, files and assistant
	// threads). Web API handlers run with it held; nothing blocks while
	// holding it (socket writes go through each connection's queue).
	mu          sync.Mutex
	closed      bool
	changed     chan struct{} // closed and replaced on every state change
	subscribers map[*subscriber]struct{}
}

func newFeed() feed {
	return feed{changed: make(chan struct{}), subscribers: make(map[*subscriber]struct{})}
}

// Update kinds.
const (
	UpdateMessage        = "message"         // a message was posted (Message set)
	UpdateMessageChanged = "message_changed" // a message was edited, streamed into or reacted to (Message set)
	UpdateMessageDeleted = "message_deleted" // a message was deleted (Channel, TS set)
	UpdateEphemeral      = "ephemeral"       // an ephemeral message was posted (Message set)
	UpdateStatus         = "status"          // assistant.threads.setStatus (Channel, ThreadTS, Status set)
	UpdateView           = "view"            // a view was opened, updated, submitted or closed
	UpdateEnvelope       = "envelope"        // an envelope was written to a connection (EnvelopeID set)
	UpdateAck            = "ack"             // an envelope was acknowledged (EnvelopeID set)
	UpdateConnection     = "connection"      // a socket-mode connection opened or closed
	UpdateCall           = "call"            // a Web API method was called (Method set)
	UpdateClosed         = "closed"          // the server closed; the channel is closed next
	// UpdateAssistant: an assistant thread's title or suggested prompts were set
	// (Channel, ThreadTS set; see Server.AssistantThread).
	UpdateAssistant = "assistant"
	// UpdateSession: an agent session's status or title changed (Channel, ThreadTS
	// set; see Server.Session).
	UpdateSession = "session"
)

// Update is a change of the emulator's state, for live views such as a
// browser playground.
type Update struct {
	Kind       string
	Channel    string
	TS         string
	ThreadTS   string
	Message    *Message
	Status     string
	EnvelopeID string
	Method     string
}

type subscriber struct {
	ch      chan Update
	dropped int
}

// WaitFor blocks until cond returns true or ctx ends. cond is evaluated after
// every change of the emulator's state (messages, statuses, acks,
// connections, ...) and must not block; it may call the Server's methods.
func (f *feed) WaitFor(ctx context.Context, cond func() bool) error {
	for {
		f.mu.Lock()
		changed := f.changed
		f.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("emulator: wait: %w", ctx.Err())
		case <-changed:
		}
	}
}

// notifyLocked wakes WaitFor callers and tells subscribers about u.
func (f *feed) notifyLocked(u Update) {
	close(f.changed)
	f.changed = make(chan struct{})
	for sub := range f.subscribers {
		select {
		case sub.ch <- u:
		default:
			sub.dropped++
		}
	}
}

// Subscribe returns a channel of updates and a function that ends the
// subscription. The channel is buffered (1024 updates); when a subscriber
// falls behind, further updates are dropped for it rather than slowing the
// emulator. The channel is closed by cancel or Close.
func (f *feed) Subscribe() (updates <-chan Update, cancel func()) {
	sub := &subscriber{ch: make(chan Update, 1024)}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		close(sub.ch)
		return sub.ch, func() {}
	}
	f.subscribers[sub] = struct{}{}
	return sub.ch, func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if _, ok := f.subscribers[sub]; ok {
			delete(f.subscribers, sub)
			close(sub.ch)
		}
	}
}

// closeLocked marks the feed closed, sends UpdateClosed and closes every
// subscriber's channel.
func (f *feed) closeLocked() {
	f.closed = true
	f.notifyLocked(Update{Kind: UpdateClosed})
	for sub := range f.subscribers {
		delete(f.subscribers, sub)
		close(sub.ch)
	}
}

// workspace is the in-memory state of the emulated workspace: its members,
// its conversations with their messages, and the assistant statuses of
// threads, behind the feed's lock. The other parts of the emulator (the
// Socket Mode hub, the Web API methods, the people acting, the playground)
// hold a pointer to it and take its lock.
type workspace struct {
	feed
	cfg  Config
	base string // "http://127.0.0.1:port"

	// Guarded by mu.
	stamps
	users      map[string]User
	userIDs    []string // the bot first, then in configuration order
	channels   map[string]*channelState
	channelIDs []string // in configuration order
	statuses   map[threadKey]*threadStatus
}

// stamps hands out the workspace's message timestamps and IDs, unique and
// increasing.
type stamps struct {
	now        func() time.Time
	lastMicros int64 // the last message timestamp handed out
	seq        int64 // for generated IDs
}

func newWorkspace(cfg Config, base string) *workspace {
	ws := &workspace{
		feed:     newFeed(),
		stamps:   stamps{now: cfg.Now},
		cfg:      cfg,
		base:     base,
		users:    make(map[string]User),
		channels: make(map[string]*channelState),
		statuses: make(map[threadKey]*threadStatus),
	}
	for _, u := range cfg.Users {
		ws.addUserLocked(u)
	}
	for _, ch := range cfg.Channels {
		ws.addChannelLocked(ch)
	}
	return ws
}

// threadKey names a thread: its channel and its parent's ts.
type threadKey struct{ channel, threadTS string }

// channelState is a conversation with its messages (threads.go reads them).
type channelState struct {
	Channel
	messages []*record // sorted by ts
	// byTS and byThread index messages, deleted ones included: by ts, and a
	// thread's replies (in ts order) by its parent's ts. A thread's lookups cost its
	// own size, not the channel's: a channel of a 1,000-thread burst holds thousands.
	byTS       map[string]*record
	byThread   map[string][]*record
	ephemerals []*record
}

// threadStatus is a thread's assistant status (assistant.threads.setStatus)
// and every status it showed.
type threadStatus struct {
	status  string
	setAt   time.Time
	history []string
}

// AddUser adds (or replaces) a workspace member.
func (ws *workspace) AddUser(u User) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	ws.addUserLocked(u)
}

func (ws *workspace) addUserLocked(u User) {
	if _, ok := ws.users[u.ID]; !ok {
		ws.userIDs = append(ws.userIDs, u.ID)
	}
	ws.users[u.ID] = u
}

// AddChannel adds a conversation; an existing one with the same ID keeps its
// messages and takes the new name and type.
func (ws *workspace) AddChannel(ch Channel) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ch.Type == "" {
		ch.Type = ChannelTypeChannel
	}
	ws.addChannelLocked(ch)
}

func (ws *workspace) addChannelLocked(ch Channel) {
	if st, ok := ws.channels[ch.ID]; ok {
		st.Channel = ch
		return
	}
	ws.channels[ch.ID] = &channelState{Channel: ch, byTS: map[string]*record{}, byThread: map[string][]*record{}}
	ws.channelIDs = append(ws.channelIDs, ch.ID)
}

// Channels returns the workspace's conversations in the order they were added.
func (ws *workspace) Channels() []Channel {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	out := make([]Channel, 0, len(ws.channelIDs))
	for _, id := range ws.channelIDs {
		out = append(out, ws.channels[id].Channel)
	}
	return out
}

// Users returns the workspace's members, the bot first.
func (ws *workspace) Users() []User {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	return ws.membersLocked()
}

func (ws *workspace) membersLocked() []User {
	out := make([]User, 0, len(ws.userIDs))
	for _, id := range ws.userIDs {
		out = append(out, ws.users[id])
	}
	return out
}

// channelLocked finds a conversation by ID. Like chat.postMessage, it also
// accepts a user ID and answers the IM between that user and the bot.
func (ws *workspace) channelLocked(id string) (*channelState, bool) {
	if ch, ok := ws.channels[id]; ok {
		return ch, true
	}
	if _, ok := ws.users[id]; ok {
		if im := ws.imLocked(id); im != nil {
			return im, true
		}
	}
	return nil, false
}

// imLocked returns the IM between user and the bot, or nil.
func (ws *workspace) imLocked(user string) *channelState {
	for _, id := range ws.channelIDs {
		if ch := ws.channels[id]; ch.Type == ChannelTypeIM && ch.User == user {
			return ch
		}
	}
	return nil
}

// findChannelLocked is channelLocked for the Server's own methods: an unknown
// conversation is ErrChannelNotFound.
func (ws *workspace) findChannelLocked(id string) (*channelState, error) {
	ch, ok := ws.channelLocked(id)
	if !ok {
		return nil, fmt.Errorf("%s: %w", id, ErrChannelNotFound)
	}
	return ch, nil
}

// channelAndUserLocked finds a conversation and a member for the Server's own
// methods (ErrChannelNotFound, ErrUserNotFound).
func (ws *workspace) channelAndUserLocked(channel, user string) (*channelState, User, error) {
	ch, err := ws.findChannelLocked(channel)
	if err != nil {
		return nil, User{}, err
	}
	u, ok := ws.users[user]
	if !ok {
		return nil, User{}, fmt.Errorf("%s: %w", user, ErrUserNotFound)
	}
	return ch, u, nil
}

// nextTSLocked hands out a unique, increasing message timestamp.
func (st *stamps) nextTSLocked() string {
	micros := st.now().UnixMicro()
	if micros <= st.lastMicros {
		micros = st.lastMicros + 1
	}
	st.lastMicros = micros
	return formatTS(micros)
}

// nextIDLocked returns prefix followed by a unique upper-case suffix, the
// shape of Slack's IDs ("Ev0000000001", "F0000000002").
func (st *stamps) nextIDLocked(prefix string) string {
	return fmt.Sprintf("%s%010d", prefix, st.nextSeqLocked())
}

// nextSeqLocked returns the next number of the sequence that IDs,
// trigger_ids and connection numbers share.
func (st *stamps) nextSeqLocked() int64 {
	st.seq++
	return st.seq
}
