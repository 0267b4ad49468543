package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/mcp"
	"github.com/threadwright/threadwright/testkit/logtest"
)

// The test binary doubles as a stdio MCP server: a test runs it (os.Args[0]) with
// envServe set, and TestMain serves instead of running the tests.
const (
	envServe = "MCPTEST_SERVE" // "stdio": serve; "exit": fail at start; "hang": never answer
	envGate  = "MCPTEST_GATE"  // a file whose existence makes the server fail at start
)

func TestMain(m *testing.M) {
	switch os.Getenv(envServe) {
	case "":
		os.Exit(m.Run())
	case "stdio":
		if gate := os.Getenv(envGate); gate != "" {
			if _, err := os.Stat(gate); err == nil {
				fmt.Fprintln(os.Stderr, "test server: gate closed, refusing to start")
				os.Exit(3)
			}
		}
		in := &freezableReader{r: os.Stdin}
		srv := newTestServer(true, in)
		err := srv.Run(context.Background(), &sdk.IOTransport{Reader: in, Writer: os.Stdout})
		if err != nil && !errors.Is(err, io.EOF) {
			fmt.Fprintln(os.Stderr, "test server:", err)
		}
		os.Exit(0)
	case "exit":
		fmt.Fprintln(os.Stderr, "test server: cannot open /data: permission denied")
		os.Exit(1)
	case "hang":
		_, _ = io.Copy(io.Discard, os.Stdin) // read requests, answer none
		os.Exit(0)
	}
}

// freezableReader stops passing input once frozen: a stuck server that answers
// nothing, not even pings.
type freezableReader struct {
	r      io.ReadCloser
	frozen atomic.Bool
}

func (f *freezableReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if f.frozen.Load() {
		select {} // stuck for good, input unread; SIGTERM ends the process
	}
	return n, err
}

func (f *freezableReader) Close() error { return f.r.Close() }

type echoArgs struct {
	Text string `json:"text" jsonschema:"the text to repeat"`
}

type addArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

type slowArgs struct {
	MS int `json:"ms" jsonschema:"how long to work, in milliseconds"`
}

type noArgs struct{}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

// newTestServer returns the MCP server of the tests. Its stdio variant (process true)
// also has tools that kill or freeze its process.
func newTestServer(process bool, in *freezableReader) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "threadwright-test", Version: "1"}, nil)
	sdk.AddTool(srv, &sdk.Tool{Name: "echo", Description: "Repeat a text."},
		func(_ context.Context, _ *sdk.CallToolRequest, a echoArgs) (*sdk.CallToolResult, any, error) {
			return text(a.Text), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "add", Description: "Add two numbers."},
		func(_ context.Context, _ *sdk.CallToolRequest, a addArgs) (*sdk.CallToolResult, any, error) {
			return text(strconv.FormatFloat(a.A+a.B, 'f', -1, 64)), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "fail", Description: "Always fail."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return nil, nil, errors.New("boom: the disk is full")
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "slow", Description: "Work for a while."},
		func(ctx context.Context, _ *sdk.CallToolRequest, a slowArgs) (*sdk.CallToolResult, any, error) {
			select {
			case <-time.After(time.Duration(a.MS) * time.Millisecond):
				return text("done"), nil, nil
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "media", Description: "Return a picture and friends."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{
				&sdk.TextContent{Text: "a chart"},
				&sdk.ImageContent{MIMEType: "image/png", Data: []byte{1, 2, 3}},
				&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///notes.txt", Text: "the notes"}},
				&sdk.ResourceLink{Name: "report", URI: "file:///report.pdf"},
			}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "stats", Description: "Structured output only."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]int{"open": 3}}, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "read.file", Title: "Read a file"},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return text("contents"), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: strings.Repeat("x", 70), Description: "A tool with a long name."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return text("long"), nil, nil
		})
	// Annotated tools, for the tool policy's classification.
	yes, no := true, false
	sdk.AddTool(srv, &sdk.Tool{Name: "lookup", Description: "Look a record up.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return text("record"), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "wipe", Description: "Delete everything.", Annotations: &sdk.ToolAnnotations{DestructiveHint: &yes, OpenWorldHint: &no}},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return text("wiped"), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "search", Description: "Search the web.", Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &yes}},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return text("results"), nil, nil
		})
	if !process {
		return srv
	}
	sdk.AddTool(srv, &sdk.Tool{Name: "pid", Description: "The server's process id."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			return text(strconv.Itoa(os.Getpid())), nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "crash", Description: "Exit in the middle of the call."},
		func(context.Context, *sdk.CallToolRequest, noArgs) (*sdk.CallToolResult, any, error) {
			fmt.Fprintln(os.Stderr, "test server: crashing on purpose")
			os.Exit(2)
			return nil, nil, nil
		})
	sdk.AddTool(srv, &sdk.Tool{Name: "freeze", Description: "Stop answering anything."},
		func(ctx context.Context, _ *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, any, error) {
			in.frozen.Store(true)
			select {}
		})
	return srv
}

// stdioServer is the configuration of the test binary as a stdio server called
// "files"; a gate file, when given, lets the test stop it from (re)starting.
func stdioServer(gate string) mcp.ServerConfig {
	env := map[string]string{envServe: "stdio"}
	if gate != "" {
		env[envGate] = gate
	}
	return mcp.ServerConfig{Name: "files", Command: []string{os.Args[0]}, Env: env, Timeout: 10 * time.Second, ConnectTimeout: 10 * time.Second}
}

// Token is the bearer token the HTTP test server requires.
const token = "s3cret-token-value"

// startHTTPServer serves newTestServer over streamable HTTP, requiring token.
func startHTTPServer(t *testing.T) *httptest.Server {
	t.Helper()
	hs := newHTTPServer()
	hs.Start()
	t.Cleanup(hs.Close)
	return hs
}

// newHTTPServer is startHTTPServer's server, not started.
func newHTTPServer() *httptest.Server {
	srv := newTestServer(false, nil)
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	return httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
}

// MustConnect connects cfg with a logger writing to the returned buffer, and closes
// the sources at the end of the test.
func MustConnect(tb testing.TB, cfg mcp.Config) (*mcp.Sources, *logtest.Buffer) {
	tb.Helper()
	logs := &logtest.Buffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srcs, err := mcp.Connect(context.Background(), cfg, logger)
	if err != nil {
		tb.Fatalf("Connect: %v\nlogs:\n%s", err, logs)
	}
	tb.Cleanup(func() { _ = srcs.Close() })
	return srcs, logs
}

// MustRegister registers srcs' tools in a new registry.
func MustRegister(tb testing.TB, srcs *mcp.Sources) *agents.Registry {
	tb.Helper()
	reg := agents.NewRegistry()
	if err := srcs.Register(reg); err != nil {
		tb.Fatalf("Register: %v", err)
	}
	return reg
}

// run calls the registered tool name with args, as the executor does.
func run(tb testing.TB, reg *agents.Registry, name, args string) (string, error) {
	tb.Helper()
	_, tool, ok := reg.Lookup(name)
	if !ok {
		tb.Fatalf("tool %s not registered; have %v", name, reg.Names())
	}
	return tool.Run(context.Background(), []byte(args))
}

// mustRun is run for a call that must succeed.
func mustRun(tb testing.TB, reg *agents.Registry, name, args string) string {
	tb.Helper()
	out, err := run(tb, reg, name, args)
	if err != nil {
		tb.Fatalf("%s(%s): %v", name, args, err)
	}
	return out
}
