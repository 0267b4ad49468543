package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/threadwright/threadwright/agents"
)

// Errors of tool calls; test with errors.Is.
var (
	// ErrUnavailable means the tool's server could not be reached, died, or did not
	// answer in time. The message reads "MCP server NAME is not available: …".
	ErrUnavailable = errors.New("mcp: server not available")
	// ErrToolFailed means the server answered that the call failed: a result with
	// isError set (the message is the result's text) or a JSON-RPC error such as
	// unknown tool or invalid arguments.
	ErrToolFailed = errors.New("mcp: tool failed")
)

// codeRejected is the JSON-RPC error code with which the SDK reports a request the
// transport could not deliver, such as an HTTP server that is down (ErrRejected of
// the go-sdk's jsonrpc2 package). It is not the server's answer.
const codeRejected = -32005

// call runs tools/call within the server's timeout (reconnecting first, within the
// connect timeout, if needed) and returns the result's text.
func (s *server) call(ctx context.Context, tool string, args json.RawMessage) (string, error) {
	sctx, cancel := context.WithTimeout(ctx, s.cfg.ConnectTimeout)
	sess, err := s.session(sctx)
	connectTimedOut := ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("MCP server %s: call of %s abandoned: %w", s.cfg.Name, tool, ctx.Err())
		}
		if connectTimedOut {
			err = fmt.Errorf("no connection within %s: %w", s.cfg.ConnectTimeout, err)
		}
		return "", s.unavailable(err)
	}

	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	timedOut := func() bool { return ctx.Err() == nil && errors.Is(cctx.Err(), context.DeadlineExceeded) }
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	res, err := sess.CallTool(cctx, &sdk.CallToolParams{Name: tool, Arguments: args})
	var rpcErr *jsonrpc.Error
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return "", fmt.Errorf("MCP server %s: call of %s abandoned: %w", s.cfg.Name, tool, ctx.Err())
	case timedOut():
		s.mu.Lock()
		if s.sess == sess {
			s.suspect = true
		}
		s.mu.Unlock()
		return "", s.unavailable(fmt.Errorf("%s did not answer within %s", tool, s.cfg.Timeout))
	case errors.As(err, &rpcErr) && rpcErr.Code != codeRejected:
		return "", &toolError{msg: fmt.Sprintf("MCP server %s refused the call of %s: %s", s.cfg.Name, tool, rpcErr.Message)}
	default: // the connection is closed, or the request could not be delivered
		s.drop(sess, err)
		return "", s.unavailable(err)
	}
	if res.NeedsInput() {
		return "", &toolError{msg: fmt.Sprintf("MCP server %s: %s asked for input, which threadwright cannot give", s.cfg.Name, tool)}
	}
	text := resultText(res)
	if res.IsError {
		if strings.TrimSpace(text) == "" {
			text = fmt.Sprintf("MCP server %s: %s failed without a message", s.cfg.Name, tool)
		}
		return "", &toolError{msg: text}
	}
	if res.StructuredContent != nil {
		// The tool-result contract is read from it (docs/tools.md, "The tool-result contract").
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			agents.ReportStructured(ctx, b)
		}
	}
	return text, nil
}

func (s *server) unavailable(err error) error {
	return &unavailableError{server: s.cfg.Name, err: err}
}

// unavailableError is ErrUnavailable with the server's name and the cause.
type unavailableError struct {
	server string
	err    error
}

func (e *unavailableError) Error() string {
	return fmt.Sprintf("MCP server %s is not available: %v", e.server, e.err)
}

func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// toolError is ErrToolFailed with the message the model reads.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func (e *toolError) Unwrap() error { return ErrToolFailed }

// resultText renders a tools/call result for the model: text contents joined by
// newlines, other contents described in brackets, and the structured content as JSON
// when there is no content (MCP specification, "Tools", "Tool Result"); a successful
// result without either says so.
func resultText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
		case *sdk.ResourceLink:
			link := fmt.Sprintf("[resource %s: %s", c.Name, c.URI)
			if c.Description != "" {
				link += " (" + c.Description + ")"
			}
			parts = append(parts, link+"]")
		case *sdk.EmbeddedResource:
			switch r := c.Resource; {
			case r == nil:
				parts = append(parts, "[empty resource]")
			case r.Blob != nil:
				parts = append(parts, fmt.Sprintf("[resource %s, %s, %d bytes, not shown]", r.URI, r.MIMEType, len(r.Blob)))
			default:
				parts = append(parts, fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%T content, not shown]", c))
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	if len(parts) == 0 && !res.IsError {
		return "(the tool returned nothing)"
	}
	return strings.Join(parts, "\n")
}
