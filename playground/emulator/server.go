package emulator

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Server is a running emulated Slack workspace: the Web API under URL(), a
// Socket Mode WebSocket endpoint, and methods that act as users (PostUserMessage,
// ClickButton, ...) and inspect what the bot did (Thread, Calls, Acks, ...).
// All methods are safe for concurrent use.
type Server struct {
	*workspace
	*socketHub
	*webAPI

	http    *http.Server
	ip      net.IP // the bound address
	port    string // the bound port
	session string // the playground's session cookie when Hardened
	events  *eventsAPI

	// Guarded by mu.
	refuseTasks bool // see RefuseTaskChunks
	files       map[string]*File
	fileOrder   []string
	responses   map[string]responseTarget // response_url id -> where it answers
	triggers    map[string]trigger        // trigger_id -> who and when
	views       map[string]*View
	viewOrder   []string

	// assistant holds the assistant threads (assistant.go).
	assistant map[threadKey]*AssistantThread
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
	ws := newWorkspace(cfg, "http://"+ln.Addr().String())
	hub := newSocketHub(ws)
	s := &Server{
		workspace: ws,
		socketHub: hub,
		events:    &eventsAPI{ws: ws, hub: hub},
		ip:        tcp.IP,
		port:      strconv.Itoa(tcp.Port),
		files:     make(map[string]*File),
		responses: make(map[string]responseTarget),
		triggers:  make(map[string]trigger),
		views:     make(map[string]*View),
	}
	if cfg.Hardened {
		s.session = randomToken("")
	}

	s.webAPI = newWebAPI(ws, hub.methods(), map[string]method{
		"api.test":                              {handle: s.apiTest, readOnly: true},
		"auth.test":                             {handle: s.authTest, readOnly: true},
		"chat.postMessage":                      {handle: s.chatPostMessage},
		"chat.update":                           {handle: s.chatUpdate},
		"chat.delete":                           {handle: s.chatDelete},
		"chat.postEphemeral":                    {handle: s.chatPostEphemeral},
		"chat.startStream":                      {handle: s.chatStartStream},
		"chat.appendStream":                     {handle: s.chatAppendStream},
		"chat.stopStream":                       {handle: s.chatStopStream},
		"chat.getPermalink":                     {handle: s.chatGetPermalink, readOnly: true},
		"conversations.replies":                 {handle: s.conversationsReplies, readOnly: true},
		"conversations.history":                 {handle: s.conversationsHistory, readOnly: true},
		"conversations.info":                    {handle: s.conversationsInfo, readOnly: true},
		"conversations.open":                    {handle: s.conversationsOpen},
		"users.info":                            {handle: s.usersInfo, readOnly: true},
		"reactions.add":                         {handle: s.reactionsAdd},
		"reactions.remove":                      {handle: s.reactionsRemove},
		"assistant.threads.setStatus":           {handle: s.assistantThreadsSetStatus},
		"assistant.threads.setSuggestedPrompts": {handle: s.assistantThreadsSetSuggestedPrompts},
		"assistant.threads.setTitle":            {handle: s.assistantThreadsSetTitle},
		"files.getUploadURLExternal":            {handle: s.filesGetUploadURLExternal},
		"files.completeUploadExternal":          {handle: s.filesCompleteUploadExternal},
		"views.open":                            {handle: s.viewsOpen},
		"views.push":                            {handle: s.viewsPush},
		"views.update":                          {handle: s.viewsUpdate},
	})
	mux := http.NewServeMux()
	mux.HandleFunc("/api/{method}", s.webAPI.serveAPI)
	mux.HandleFunc("GET /link/", s.socketHub.serveSocket)
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
	conns := s.socketHub.stopLocked()
	s.workspace.closeLocked()
	s.mu.Unlock()

	err := s.http.Close()
	for _, c := range conns {
		c.close()
	}
	s.socketHub.wg.Wait()
	return err
}
