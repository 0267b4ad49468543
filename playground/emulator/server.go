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
// Socket Mode WebSocket endpoint, the playground page at PageURL(), and
// methods that act as users (PostUserMessage, ClickButton, ...) and inspect
// what the bot did (Thread, Calls, Acks, ...). All methods are safe for
// concurrent use.
//
// Each job has its own part, and Server's methods are theirs: the workspace
// (members, conversations, messages, statuses; WaitFor, Subscribe), the
// Socket Mode hub (connections, envelopes, acks), the Web API's dispatch
// (calls, injected faults and latency), streaming, files, the assistant
// threads, the modals, the people acting and the clicks on the bot's
// elements. They share the workspace's one lock.
type Server struct {
	*workspace
	*socketHub
	*webAPI
	*streamAPI
	*filesAPI
	*assistantAPI
	*agentAPI
	*modals
	*people
	*blockActions

	http *http.Server
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
	guard := hostGuard{base: "http://" + ln.Addr().String(), ip: tcp.IP, port: strconv.Itoa(tcp.Port)}
	s, mux := build(cfg, guard)
	s.http = &http.Server{Handler: guard.wrap(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := s.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			cfg.Logger.Error("emulator: serve", "err", err)
		}
	}()
	return s, nil
}

// build makes the parts of a server at guard's address, and its routes.
func build(cfg Config, guard hostGuard) (*Server, *http.ServeMux) {
	ws := newWorkspace(cfg, guard.base)
	hub := newSocketHub(ws)
	ev := &eventsAPI{ws: ws, hub: hub}
	in := newInteractivity(ws, hub, ev)
	agent := &agentAPI{ws: ws, ev: ev, sessions: make(map[threadKey]*AgentSession)}
	s := &Server{
		workspace:    ws,
		socketHub:    hub,
		streamAPI:    &streamAPI{ws: ws, ev: ev, agent: agent},
		filesAPI:     &filesAPI{ws: ws, ev: ev, files: make(map[string]*File)},
		assistantAPI: &assistantAPI{ws: ws, ev: ev, threads: make(map[threadKey]*AssistantThread)},
		agentAPI:     agent,
		modals:       &modals{ws: ws, hub: hub, in: in, views: make(map[string]*View)},
		people:       &people{ws: ws, ev: ev, in: in},
		blockActions: &blockActions{ws: ws, in: in},
	}
	s.webAPI = newWebAPI(ws,
		hub.methods(),
		(&chatAPI{ws: ws, ev: ev}).methods(),
		s.streamAPI.methods(),
		(&conversationsAPI{ws: ws}).methods(),
		s.filesAPI.methods(),
		s.assistantAPI.methods(),
		s.agentAPI.methods(),
		s.modals.methods(),
	)
	return s, s.routes(in, guard.port)
}

// routes answers the Web API, Socket Mode, file uploads and downloads,
// response_urls (in's) and the playground; port names the playground's
// session cookie.
func (s *Server) routes(in *interactivity, port string) *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/{method}", s.webAPI.serveAPI)
	mux.HandleFunc("GET /link/", s.socketHub.serveSocket)
	mux.HandleFunc("POST /upload/{file}", s.filesAPI.serveUpload)
	mux.HandleFunc("GET /files/{file}/{name...}", s.filesAPI.serveFile)
	mux.HandleFunc("POST /response/{id}", in.serveResponseURL)
	ui := &playground{ws: s.workspace, hub: s.socketHub, modals: s.modals, files: s.filesAPI, assist: s.assistantAPI, agent: s.agentAPI,
		actions: s.blockActions, people: s.people, port: port}
	if s.cfg.Hardened {
		ui.session = randomToken("")
	}
	ui.route(mux)
	return mux
}

// URL returns the Web API base URL with its trailing slash,
// "http://127.0.0.1:port/api/", the value slack.OptionAPIURL expects.
func (s *Server) URL() string { return s.base + "/api/" }

// PageURL returns the address of the browser playground,
// "http://127.0.0.1:port/": a Slack-like channel view of the workspace
// where a person can talk to the bot, click its buttons and fill its modals.
// Add "?user=U0BOB" to act as another member.
func (s *Server) PageURL() string { return s.base + "/" }

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
