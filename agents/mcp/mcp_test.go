package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mcp"
)

func TestRegister(t *testing.T) {
	srcs, _ := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{stdioServer("")}})
	reg := MustRegister(t, srcs)

	want := []string{
		"files__add", "files__crash", "files__echo", "files__fail", "files__freeze", "files__lookup",
		"files__media", "files__pid", "files__read_file", "files__search", "files__slow", "files__stats", "files__wipe",
	}
	names := reg.Names()
	long := names[len(names)-1] // "files__xxx…" sorts last
	if got := strings.Join(names[:len(names)-1], " "); got != strings.Join(want, " ") {
		t.Errorf("names = %s\nwant %s", got, strings.Join(want, " "))
	}
	if len(long) != 64 || !strings.HasPrefix(long, "files__xxxx") {
		t.Errorf("long name = %q (%d characters), want 64 characters starting files__xxxx", long, len(long))
	}

	spec, _, _ := reg.Lookup("files__echo")
	if spec.Category != "MCP: files" || spec.Description != `<tool_description trust="untrusted">Repeat a text.</tool_description>` {
		t.Errorf("echo: category %q, description %q", spec.Category, spec.Description)
	}
	if spec.Timeout != 10*time.Second+10*time.Second+2*time.Second {
		t.Errorf("echo: timeout %s, want the server's connect timeout and timeout, 10s each, plus 2s", spec.Timeout)
	}
	var schema struct {
		Type       string
		Properties map[string]struct{ Type, Description string }
		Required   []string
	}
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.Properties["text"].Type != "string" ||
		schema.Properties["text"].Description != "the text to repeat" || strings.Join(schema.Required, ",") != "text" {
		t.Errorf("echo schema = %s", spec.Parameters)
	}

	t.Run("TitleAsDescription", func(t *testing.T) {
		spec, _, _ := reg.Lookup("files__read_file")
		// The server is not trusted: the description is fenced (agents.FenceDescription).
		if spec.Description != `<tool_description trust="untrusted">Read a file</tool_description>` || !spec.UntrustedDescription {
			t.Errorf("description = %q, want the title, fenced", spec.Description)
		}
	})
	t.Run("EmptySchemaHasProperties", func(t *testing.T) {
		spec, _, _ := reg.Lookup("files__fail")
		if p := string(spec.Parameters); !strings.Contains(p, `"properties":{}`) || !strings.Contains(p, `"type":"object"`) {
			t.Errorf("parameters = %s", spec.Parameters)
		}
	})
	t.Run("Describe", func(t *testing.T) {
		if d := reg.Describe(); !strings.HasPrefix(d, "MCP: files:\n- files__add: <tool_description trust=\"untrusted\">Add two numbers.</tool_description>\n") {
			t.Errorf("Describe() =\n%s", d)
		}
	})
	t.Run("ErrDuplicateTool", func(t *testing.T) {
		if err := srcs.Register(reg); !errors.Is(err, agents.ErrDuplicateTool) {
			t.Errorf("second Register: %v, want ErrDuplicateTool", err)
		}
	})
	t.Run("Prefix", func(t *testing.T) {
		sc := stdioServer("")
		sc.Prefix = "fs"
		srcs, _ := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{sc}})
		reg := MustRegister(t, srcs)
		if _, _, ok := reg.Lookup("fs__echo"); !ok {
			t.Errorf("names = %v, want fs__echo among them", reg.Names())
		}
	})
}

func TestCall(t *testing.T) {
	srcs, _ := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{stdioServer("")}})
	reg := MustRegister(t, srcs)

	t.Run("Echo", func(t *testing.T) {
		if out := mustRun(t, reg, "files__echo", `{"text":"hello, world"}`); out != "hello, world" {
			t.Errorf("echo = %q", out)
		}
	})
	t.Run("Add", func(t *testing.T) {
		if out := mustRun(t, reg, "files__add", `{"a":2,"b":3.5}`); out != "5.5" {
			t.Errorf("add = %q", out)
		}
	})
	t.Run("SanitisedName", func(t *testing.T) {
		if out := mustRun(t, reg, "files__read_file", `{}`); out != "contents" {
			t.Errorf("read.file = %q", out)
		}
	})
	t.Run("EmptyArguments", func(t *testing.T) {
		if out := mustRun(t, reg, "files__read_file", ``); out != "contents" {
			t.Errorf("read.file = %q", out)
		}
	})
	t.Run("NonTextContent", func(t *testing.T) {
		want := "a chart\n[image image/png, 3 bytes, not shown]\n[resource file:///notes.txt]\nthe notes\n[resource report: file:///report.pdf]"
		if out := mustRun(t, reg, "files__media", `{}`); out != want {
			t.Errorf("media =\n%s\nwant\n%s", out, want)
		}
	})
	t.Run("StructuredContent", func(t *testing.T) {
		if out := mustRun(t, reg, "files__stats", `{}`); out != `{"open":3}` {
			t.Errorf("stats = %q", out)
		}
	})
	t.Run("ErrToolFailed", func(t *testing.T) {
		_, err := run(t, reg, "files__fail", `{}`)
		if !errors.Is(err, mcp.ErrToolFailed) || errors.Is(err, mcp.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrToolFailed", err)
		}
		if err.Error() != "boom: the disk is full" {
			t.Errorf("message = %q, want the tool's text", err)
		}
	})
	t.Run("InvalidArguments", func(t *testing.T) {
		_, err := run(t, reg, "files__echo", `{"text":5}`)
		if !errors.Is(err, mcp.ErrToolFailed) {
			t.Fatalf("err = %v, want ErrToolFailed", err)
		}
	})
	t.Run("Parallel", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				want := "call " + strconv.Itoa(i)
				out, err := run(t, reg, "files__echo", `{"text":"`+want+`"}`)
				if err != nil || out != want {
					t.Errorf("echo %d = %q, %v", i, out, err)
				}
			})
		}
		wg.Wait()
	})
}

// pid asks the stdio test server for its process id.
func pid(t *testing.T, reg *agents.Registry) int {
	t.Helper()
	n, err := strconv.Atoi(mustRun(t, reg, "files__pid", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wantUnavailable fails unless err is ErrUnavailable naming the server files and
// containing each of details.
func wantUnavailable(t *testing.T, err error, details ...string) {
	t.Helper()
	if !errors.Is(err, mcp.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	if !strings.HasPrefix(err.Error(), "MCP server files is not available: ") {
		t.Errorf("message = %q, want it to name the server", err)
	}
	for _, d := range details {
		if !strings.Contains(err.Error(), d) {
			t.Errorf("message = %q, want it to contain %q", err, d)
		}
	}
}

// eventually calls the tool until it succeeds, for at most 10 s.
func eventually(t *testing.T, reg *agents.Registry, name, args string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		out, err := run(t, reg, name, args)
		if err == nil {
			return out
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s still failing: %v", name, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestServerFailure(t *testing.T) {
	t.Run("KilledBetweenCalls", func(t *testing.T) {
		gate := filepath.Join(t.TempDir(), "gate")
		cfg := mcp.Config{Servers: []mcp.ServerConfig{stdioServer(gate)}, RetryDelay: 10 * time.Millisecond}
		srcs, logs := MustConnect(t, cfg)
		reg := MustRegister(t, srcs)
		first := pid(t, reg)

		// Kill the server and keep it from restarting: its tools fail cleanly.
		if err := os.WriteFile(gate, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(first, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		_, err := run(t, reg, "files__echo", `{"text":"hi"}`)
		wantUnavailable(t, err)
		// The next call tries to restart it, which fails too. A deliberate passage of
		// time, not a synchronisation: a call within RetryDelay (10 ms) of a failed
		// attempt does not try again, and nothing but the clock ends that backoff.
		time.Sleep(20 * time.Millisecond)
		_, err = run(t, reg, "files__echo", `{"text":"hi"}`)
		wantUnavailable(t, err)

		// Let it start again: a later call reconnects to a new process.
		if err := os.Remove(gate); err != nil {
			t.Fatal(err)
		}
		if out := eventually(t, reg, "files__echo", `{"text":"back"}`); out != "back" {
			t.Errorf("echo after restart = %q", out)
		}
		if again := pid(t, reg); again == first {
			t.Errorf("pid %d after the restart, want a new process", again)
		}
		if l := logs.String(); !strings.Contains(l, "MCP server reconnection failed") ||
			!strings.Contains(l, "gate closed") || !strings.Contains(l, "MCP server reconnected") {
			t.Errorf("logs lack the failed reconnection with the server's stderr, or the reconnection:\n%s", l)
		}
	})

	t.Run("DiesDuringCall", func(t *testing.T) {
		srcs, logs := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{stdioServer("")}})
		reg := MustRegister(t, srcs)
		first := pid(t, reg)
		_, err := run(t, reg, "files__crash", `{}`)
		wantUnavailable(t, err)
		// The call that lost the connection dropped it: the next one reconnects.
		if out := mustRun(t, reg, "files__echo", `{"text":"again"}`); out != "again" {
			t.Errorf("echo = %q", out)
		}
		if pid(t, reg) == first {
			t.Error("the same process answers after the crash")
		}
		// The crash reason is logged once the dead process has been waited for, in the
		// background: wait for it rather than race it.
		deadline := time.Now().Add(10 * time.Second)
		for !strings.Contains(logs.String(), "crashing on purpose") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if l := logs.String(); !strings.Contains(l, "crashing on purpose") {
			t.Errorf("logs lack the server's stderr:\n%s", l)
		}
	})

	t.Run("Timeout", func(t *testing.T) {
		sc := stdioServer("")
		sc.Timeout = 500 * time.Millisecond
		srcs, _ := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{sc}})
		reg := MustRegister(t, srcs)
		first := pid(t, reg)

		start := time.Now()
		_, err := run(t, reg, "files__slow", `{"ms":20000}`)
		wantUnavailable(t, err, "slow did not answer within 500ms")
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("the call took %s", d)
		}
		// The server still answers a ping: the next call uses the same process.
		if got := pid(t, reg); got != first {
			t.Errorf("pid %d after a timeout, want the same process %d", got, first)
		}
	})

	t.Run("Stuck", func(t *testing.T) {
		sc := stdioServer("")
		sc.Timeout = 500 * time.Millisecond
		sc.ConnectTimeout = 4 * time.Second // the ping takes a quarter
		srcs, logs := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{sc}})
		reg := MustRegister(t, srcs)
		first := pid(t, reg)

		_, err := run(t, reg, "files__freeze", `{}`)
		wantUnavailable(t, err, "freeze did not answer within 500ms")
		// The next call finds the server deaf to pings and starts a new one.
		if got := pid(t, reg); got == first {
			t.Errorf("pid %d: the stuck process still serves", got)
		}
		if l := logs.String(); !strings.Contains(l, "no answer to a ping after a call timed out") {
			t.Errorf("logs lack the failed health check:\n%s", l)
		}
	})

	t.Run("Abandoned", func(t *testing.T) {
		srcs, _ := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{stdioServer("")}})
		reg := MustRegister(t, srcs)
		_, tool, _ := reg.Lookup("files__slow")
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := tool.Run(ctx, []byte(`{"ms":20000}`))
		if !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, mcp.ErrUnavailable) {
			t.Errorf("err = %v, want the caller's context error, not the server's fault", err)
		}
		if out := mustRun(t, reg, "files__echo", `{"text":"fine"}`); out != "fine" {
			t.Errorf("echo = %q", out)
		}
	})

	t.Run("Closed", func(t *testing.T) {
		srcs, _ := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{stdioServer("")}})
		reg := MustRegister(t, srcs)
		p := pid(t, reg)
		if err := srcs.Close(); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(p, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("the server process %d is still there after Close (%v)", p, err)
		}
		_, err := run(t, reg, "files__echo", `{"text":"hi"}`)
		wantUnavailable(t, err, "closed")
	})
}

func TestStartup(t *testing.T) {
	exiting := mcp.ServerConfig{Name: "files", Command: []string{os.Args[0]}, Env: map[string]string{"MCPTEST_SERVE": "exit"}}

	t.Run("FailureLeavesToolsOut", func(t *testing.T) {
		other := stdioServer("")
		other.Name = "other"
		srcs, logs := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{exiting, other}})
		reg := MustRegister(t, srcs)
		for _, n := range reg.Names() {
			if strings.HasPrefix(n, "files__") {
				t.Errorf("tool %s of the failed server registered", n)
			}
		}
		if _, _, ok := reg.Lookup("other__echo"); !ok {
			t.Errorf("the healthy server's tools are missing: %v", reg.Names())
		}
		l := logs.String()
		if !strings.Contains(l, "MCP server not available at start-up") || !strings.Contains(l, "cannot open /data") {
			t.Errorf("logs lack the failure and the server's stderr:\n%s", l)
		}
	})

	t.Run("Required", func(t *testing.T) {
		req := exiting
		req.Required = true
		_, err := mcp.Connect(context.Background(), mcp.Config{Servers: []mcp.ServerConfig{req}}, nil)
		if err == nil || !strings.Contains(err.Error(), "required MCP server files") {
			t.Errorf("err = %v, want one naming the required server", err)
		}
	})

	t.Run("Timeout", func(t *testing.T) {
		hang := mcp.ServerConfig{Name: "files", Command: []string{os.Args[0]}, Env: map[string]string{"MCPTEST_SERVE": "hang"},
			Timeout: 300 * time.Millisecond, Required: true}
		start := time.Now()
		_, err := mcp.Connect(context.Background(), mcp.Config{Servers: []mcp.ServerConfig{hang}}, nil)
		if err == nil || !strings.Contains(err.Error(), "files") {
			t.Errorf("err = %v, want a failure naming the server", err)
		}
		if d := time.Since(start); d > 8*time.Second {
			t.Errorf("Connect took %s", d)
		}
	})

	t.Run("NoSuchProgram", func(t *testing.T) {
		bad := mcp.ServerConfig{Name: "files", Command: []string{filepath.Join(t.TempDir(), "missing")}, Required: true}
		_, err := mcp.Connect(context.Background(), mcp.Config{Servers: []mcp.ServerConfig{bad}}, nil)
		if err == nil || !strings.Contains(err.Error(), "files") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("InvalidConfig", func(t *testing.T) {
		_, err := mcp.Connect(context.Background(), mcp.Config{Servers: []mcp.ServerConfig{{Name: "x"}}}, nil)
		if !errors.Is(err, mcp.ErrConfig) {
			t.Errorf("err = %v, want ErrConfig", err)
		}
	})

	t.Run("NoServers", func(t *testing.T) {
		srcs, _ := MustConnect(t, mcp.Config{})
		if reg := MustRegister(t, srcs); reg.Len() != 0 {
			t.Errorf("tools: %v", reg.Names())
		}
	})
}

func TestHTTP(t *testing.T) {
	crm := func(url, tok string) mcp.ServerConfig {
		return mcp.ServerConfig{Name: "crm", URL: url, Headers: map[string]string{"Authorization": "Bearer " + tok}, Timeout: 5 * time.Second}
	}

	t.Run("Call", func(t *testing.T) {
		hs := startHTTPServer(t)
		srcs, logs := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{crm(hs.URL, token)}})
		reg := MustRegister(t, srcs)
		spec, _, ok := reg.Lookup("crm__echo")
		if !ok || spec.Category != "MCP: crm" {
			t.Fatalf("crm__echo: %+v, %v; have %v", spec, ok, reg.Names())
		}
		if out := mustRun(t, reg, "crm__add", `{"a":40,"b":2}`); out != "42" {
			t.Errorf("add = %q", out)
		}
		_, err := run(t, reg, "crm__fail", `{}`)
		if !errors.Is(err, mcp.ErrToolFailed) {
			t.Errorf("fail: %v", err)
		}
		if l := logs.String(); strings.Contains(l, token) || !strings.Contains(l, "Authorization") {
			t.Errorf("logs show the token or lack the header's name:\n%s", l)
		}

		// The server goes away: the tools fail cleanly, naming it.
		hs.CloseClientConnections()
		hs.Close()
		_, err = run(t, reg, "crm__echo", `{"text":"hi"}`)
		if !errors.Is(err, mcp.ErrUnavailable) || !strings.HasPrefix(err.Error(), "MCP server crm is not available: ") {
			t.Errorf("err = %v, want ErrUnavailable naming crm", err)
		}
		if strings.Contains(err.Error(), token) {
			t.Errorf("the error shows the token: %v", err)
		}
	})

	t.Run("Restarted", func(t *testing.T) {
		// A server that restarts at the same address forgets the session: the
		// call after the restart reconnects.
		first := startHTTPServer(t)
		addr := first.Listener.Addr().String()
		cfg := mcp.Config{Servers: []mcp.ServerConfig{crm(first.URL, token)}, RetryDelay: 10 * time.Millisecond}
		srcs, _ := MustConnect(t, cfg)
		reg := MustRegister(t, srcs)
		mustRun(t, reg, "crm__echo", `{"text":"one"}`)
		first.Close()
		_, err := run(t, reg, "crm__echo", `{"text":"down"}`)
		if !errors.Is(err, mcp.ErrUnavailable) {
			t.Fatalf("err = %v, want ErrUnavailable", err)
		}

		second := newHTTPServer()
		second.Listener.Close()
		l, err := net.Listen("tcp", addr)
		if err != nil {
			t.Skipf("cannot listen on %s again: %v", addr, err)
		}
		second.Listener = l
		second.Start()
		t.Cleanup(second.Close)
		if out := eventually(t, reg, "crm__echo", `{"text":"two"}`); out != "two" {
			t.Errorf("echo = %q", out)
		}
	})

	t.Run("Unauthorized", func(t *testing.T) {
		hs := startHTTPServer(t)
		srcs, logs := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{crm(hs.URL, "wrong-secret")}})
		if reg := MustRegister(t, srcs); reg.Len() != 0 {
			t.Errorf("tools of a refusing server: %v", reg.Names())
		}
		if l := logs.String(); !strings.Contains(l, "crm") || strings.Contains(l, "wrong-secret") {
			t.Errorf("logs lack the server or show the token:\n%s", l)
		}

		req := crm(hs.URL, "wrong-secret")
		req.Required = true
		_, err := mcp.Connect(context.Background(), mcp.Config{Servers: []mcp.ServerConfig{req}}, nil)
		if err == nil || !strings.Contains(err.Error(), "required MCP server crm") || strings.Contains(err.Error(), "wrong-secret") {
			t.Errorf("err = %v", err)
		}
	})

	t.Run("Down", func(t *testing.T) {
		hs := startHTTPServer(t)
		url := hs.URL
		hs.Close()
		srcs, logs := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{crm(url, token)}})
		if reg := MustRegister(t, srcs); reg.Len() != 0 {
			t.Errorf("tools of a server that is down: %v", reg.Names())
		}
		if l := logs.String(); !strings.Contains(l, "MCP server not available at start-up") {
			t.Errorf("logs:\n%s", l)
		}
	})
}

// TestAnnotations: the tool policy's classification follows the MCP annotations and
// the server's trusted flag (docs/tools.md, "Tool policy").
func TestAnnotations(t *testing.T) {
	type class struct{ readOnly, approval, untrusted bool }
	for _, trusted := range []bool{false, true} {
		hs := startHTTPServer(t)
		cfg := mcp.ServerConfig{Name: "crm", URL: hs.URL, Headers: map[string]string{"Authorization": "Bearer " + token}, Timeout: 5 * time.Second, Trusted: trusted}
		srcs, _ := MustConnect(t, mcp.Config{Servers: []mcp.ServerConfig{cfg}})
		reg := MustRegister(t, srcs)
		want := map[string]class{
			// readOnlyHint runs freely; destructiveHint always asks; no hint asks
			// unless the server is trusted; an untrusted server's output is
			// untrusted, a trusted one's only with openWorldHint.
			"crm__lookup": {readOnly: true, untrusted: !trusted},
			"crm__search": {readOnly: true, untrusted: true},
			"crm__wipe":   {approval: true, untrusted: !trusted},
			"crm__echo":   {approval: !trusted, untrusted: !trusted},
		}
		for name, w := range want {
			spec, _, ok := reg.Lookup(name)
			if got := (class{spec.ReadOnly, spec.NeedsApproval, spec.Untrusted}); !ok || got != w {
				t.Errorf("trusted %v: %s = %+v, want %+v", trusted, name, got, w)
			}
		}
	}
}
