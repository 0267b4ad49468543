package emulator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is a running emulated Slack workspace: the Web API under URL(), a
// Socket Mode WebSocket endpoint, and methods that act as users (PostUserMessage,
// ClickButton, ...) and inspect what the bot did (Thread, Calls, Acks, ...).
// All methods are safe for concurrent use.
type Server struct {
	cfg     Config
	http    *http.Server
	base    string         // "http://127.0.0.1:port"
	ip      net.IP         // the bound address
	port    string         // the bound port
	session string         // the playground's session cookie when Hardened
	wg      sync.WaitGroup // socket-mode connection goroutines

	// mu guards everything below. Web API handlers run with it held; nothing
	// blocks while holding it (socket writes go through each conn's queue).
	mu          sync.Mutex
	closed      bool
	users       map[string]User
	userIDs     []string // the bot first, then in configuration order
	channels    map[string]*channelState
	channelIDs  []string // in configuration order
	lastMicros  int64    // the last message timestamp handed out
	seq         int64    // for generated IDs
	calls       []Call
	faults      map[string][]fault
	latency     map[string]time.Duration
	refuseTasks bool // see RefuseTaskChunks
	statuses    map[threadKey]*threadStatus
	conns       []*conn // open socket-mode connections, in connection order
	nextConn    int     // round-robin cursor into conns
	tickets     map[string]bool
	envelopes   map[string]*envelope
	envOrder    []*envelope
	pending     []*envelope // waiting for a connection
	acks        []Ack
	files       map[string]*File
	fileOrder   []string
	responses   map[string]responseTarget // response_url id -> where it answers
	triggers    map[string]trigger        // trigger_id -> who and when
	views       map[string]*View
	viewOrder   []string
	changed     chan struct{} // closed and replaced on every state change
	subscribers map[*subscriber]struct{}

	// assistant holds the assistant threads (assistant.go).
	assistant map[threadKey]*AssistantThread
}

type threadKey struct{ channel, threadTS string }

type channelState struct {
	Channel
	messages   []*record // sorted by ts
	ephemerals []*record
}

// NewServer starts an emulated Slack listening on cfg.Addr (by default a free
// port on 127.0.0.1), in the manner of httptest.NewServer. Call Close when done.
//
//	emu, err := emulator.NewServer(emulator.Config{})
//	api := slack.New(emu.Config().BotToken, slack.OptionAPIURL(emu.URL()),
//		slack.OptionAppLevelToken(emu.Config().AppToken))
//	client := socketmode.New(api)
func NewServer(cfg Config) (*Server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("emulator: listen on %s: %w", cfg.Addr, err)
	}
	tcp := ln.Addr().(*net.TCPAddr)
	s := &Server{
		cfg:         cfg,
		base:        "http://" + ln.Addr().String(),
		ip:          tcp.IP,
		port:        strconv.Itoa(tcp.Port),
		users:       make(map[string]User),
		channels:    make(map[string]*channelState),
		faults:      make(map[string][]fault),
		statuses:    make(map[threadKey]*threadStatus),
		tickets:     make(map[string]bool),
		envelopes:   make(map[string]*envelope),
		files:       make(map[string]*File),
		responses:   make(map[string]responseTarget),
		triggers:    make(map[string]trigger),
		views:       make(map[string]*View),
		changed:     make(chan struct{}),
		subscribers: make(map[*subscriber]struct{}),
	}
	for _, u := range cfg.Users {
		s.addUserLocked(u)
	}
	for _, ch := range cfg.Channels {
		s.addChannelLocked(ch)
	}
	if cfg.Hardened {
		s.session = randomToken("")
	}
	s.latency = make(map[string]time.Duration, len(cfg.Latency))
	maps.Copy(s.latency, cfg.Latency)

	mux := http.NewServeMux()
	mux.HandleFunc("/api/{method}", s.serveAPI)
	mux.HandleFunc("GET /link/", s.serveSocket)
	mux.HandleFunc("POST /upload/{file}", s.serveUpload)
	mux.HandleFunc("GET /files/{file}/{name...}", s.serveFile)
	mux.HandleFunc("POST /response/{id}", s.serveResponseURL)
	s.routeWeb(mux)
	s.http = &http.Server{Handler: s.guard(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Logger.Error("emulator: serve", "err", err)
		}
	}()
	return s, nil
}

// URL returns the Web API base URL with its trailing slash,
// "http://127.0.0.1:port/api/", the value slack.OptionAPIURL expects.
func (s *Server) URL() string { return s.base + "/api/" }

// Config returns the effective configuration, defaults filled in. Users,
// Channels and Latency are as configured; see Users, Channels and SetLatency
// for later changes.
func (s *Server) Config() Config {
	c := s.cfg
	c.Users = slices.Clone(c.Users)
	c.Channels = slices.Clone(c.Channels)
	c.Latency = maps.Clone(c.Latency)
	c.Commands = slices.Clone(c.Commands)
	c.Shortcuts = slices.Clone(c.Shortcuts)
	return c
}

// Close stops the server: it closes the socket-mode connections (without a
// disconnect message), stops redelivery timers and waits for its goroutines.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	conns := s.conns
	s.conns = nil
	for _, env := range s.envelopes {
		env.stopTimer()
	}
	s.notifyLocked(Update{Kind: UpdateClosed})
	for sub := range s.subscribers {
		delete(s.subscribers, sub)
		close(sub.ch)
	}
	s.mu.Unlock()

	err := s.http.Close()
	for _, c := range conns {
		c.close()
	}
	s.wg.Wait()
	return err
}

// AddUser adds (or replaces) a workspace member.
func (s *Server) AddUser(u User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addUserLocked(u)
}

func (s *Server) addUserLocked(u User) {
	if _, ok := s.users[u.ID]; !ok {
		s.userIDs = append(s.userIDs, u.ID)
	}
	s.users[u.ID] = u
}

// AddChannel adds a conversation; an existing one with the same ID keeps its
// messages and takes the new name and type.
func (s *Server) AddChannel(ch Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch.Type == "" {
		ch.Type = ChannelTypeChannel
	}
	s.addChannelLocked(ch)
}

func (s *Server) addChannelLocked(ch Channel) {
	if st, ok := s.channels[ch.ID]; ok {
		st.Channel = ch
		return
	}
	s.channels[ch.ID] = &channelState{Channel: ch}
	s.channelIDs = append(s.channelIDs, ch.ID)
}

// Channels returns the workspace's conversations in the order they were added.
func (s *Server) Channels() []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Channel, 0, len(s.channelIDs))
	for _, id := range s.channelIDs {
		out = append(out, s.channels[id].Channel)
	}
	return out
}

// Users returns the workspace's members, the bot first.
func (s *Server) Users() []User {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]User, 0, len(s.userIDs))
	for _, id := range s.userIDs {
		out = append(out, s.users[id])
	}
	return out
}

// nextTSLocked hands out a unique, increasing message timestamp.
func (s *Server) nextTSLocked() string {
	micros := s.cfg.Now().UnixMicro()
	if micros <= s.lastMicros {
		micros = s.lastMicros + 1
	}
	s.lastMicros = micros
	return formatTS(micros)
}

// nextIDLocked returns prefix followed by a unique upper-case suffix, the
// shape of Slack's IDs ("Ev0000000001", "F0000000002").
func (s *Server) nextIDLocked(prefix string) string {
	s.seq++
	return fmt.Sprintf("%s%010d", prefix, s.seq)
}

// newUUID returns a random version 4 UUID, the shape of envelope IDs and
// client_msg_id values.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return strings.Join([]string{h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]}, "-")
}

// WaitFor blocks until cond returns true or ctx ends. cond is evaluated after
// every change of the emulator's state (messages, statuses, acks,
// connections, ...) and must not block; it may call the Server's methods.
func (s *Server) WaitFor(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
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
func (s *Server) notifyLocked(u Update) {
	close(s.changed)
	s.changed = make(chan struct{})
	for sub := range s.subscribers {
		select {
		case sub.ch <- u:
		default:
			sub.dropped++
		}
	}
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

// Subscribe returns a channel of updates and a function that ends the
// subscription. The channel is buffered (1024 updates); when a subscriber
// falls behind, further updates are dropped for it rather than slowing the
// emulator. The channel is closed by cancel or Close.
func (s *Server) Subscribe() (updates <-chan Update, cancel func()) {
	sub := &subscriber{ch: make(chan Update, 1024)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		close(sub.ch)
		return sub.ch, func() {}
	}
	s.subscribers[sub] = struct{}{}
	return sub.ch, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.subscribers[sub]; ok {
			delete(s.subscribers, sub)
			close(sub.ch)
		}
	}
}
