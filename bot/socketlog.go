package bot

import (
	"encoding/json"
	"strings"
	"sync"
)

// dropReasons learns why the Socket Mode connection dropped from slack-go's debug
// lines, which it receives as socketmode.OptionLog's logger with OptionDebug on:
// slack-go reconnects by itself and gives no event with the cause (the ConnectingEvent
// that follows has none), but its debug output has it ("Reconnecting due to …") and
// Slack's own reason in the disconnect message it received (docs/operations.md, "Deploy"). Every
// other line is dropped unread: they carry payloads and must not reach the log. It is
// safe for concurrent use.
type dropReasons struct {
	mu sync.Mutex
	// requested is Slack's reason from its last disconnect message ("" when none
	// came since the last take); cause is slack-go's reason for its last reconnect.
	requested, cause string
}

// slack-go's debug lines that dropReasons reads.
const (
	reconnectingPrefix = "Reconnecting due to "
	receivedPrefix     = "Received WebSocket message: "
)

// Output implements slack-go's logger interface (the interface of log.Logger.Output).
func (d *dropReasons) Output(_ int, s string) error {
	switch {
	case strings.HasPrefix(s, reconnectingPrefix):
		d.mu.Lock()
		d.cause = strings.TrimSpace(strings.TrimPrefix(s, reconnectingPrefix))
		d.mu.Unlock()
	case strings.HasPrefix(s, receivedPrefix) && strings.Contains(s, `"disconnect"`):
		// {"type":"disconnect","reason":"refresh_requested","debug_info":{…}}
		var m struct {
			Type   string `json:"type"`
			Reason string `json:"reason"`
		}
		if json.Unmarshal([]byte(strings.TrimPrefix(s, receivedPrefix)), &m) == nil && m.Type == "disconnect" {
			if m.Reason == "" {
				m.Reason = "unknown"
			}
			d.mu.Lock()
			d.requested = m.Reason
			d.mu.Unlock()
		}
	}
	return nil
}

// take returns why the connection last dropped, and forgets it: Slack's reason when
// it asked for the reconnect ("slack_disconnect", its reason), slack-go's otherwise
// ("connection_lost", the error that ended the connection), or fallback.
func (d *dropReasons) take(fallback string) (kind, reason string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	requested, cause := d.requested, d.cause
	d.requested, d.cause = "", ""
	switch {
	case requested != "":
		return "slack_disconnect", requested
	case cause != "":
		return "connection_lost", cause
	}
	return "connection_lost", fallback
}
