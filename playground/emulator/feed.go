package emulator

import (
	"context"
	"fmt"
	"sync"
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
