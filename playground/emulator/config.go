package emulator

import (
	"cmp"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"
)

// Slack limits the emulator enforces. Sources: chat.postMessage ("msg_too_long",
// https://docs.slack.dev/reference/methods/chat.postMessage), Block Kit
// (https://docs.slack.dev/reference/block-kit/blocks) and chat.appendStream.
const (
	// MaxTextLength is the length, in characters, above which Slack rejects a
	// message's text with msg_too_long.
	MaxTextLength = 40000
	// StrictTextLength is the length, in characters, above which the emulator
	// answers msg_too_long unless Config.LenientTextLimit is set: the length the
	// bot must split its replies at.
	StrictTextLength = 4000
	// MaxUpdateTextLength is the length, in characters, above which chat.update
	// rejects a message's text with msg_too_long, whatever Config.LenientTextLimit
	// says: Slack caps an edited message's text at 4,000 characters, where a new
	// message's is MaxTextLength, as observed in the field.
	MaxUpdateTextLength = 4000
	// MaxBlocks is the number of blocks a message may carry.
	MaxBlocks = 50
	// MaxSectionTextLength is the length of a section block's text.
	MaxSectionTextLength = 3000
	// MaxStreamTextLength is the length of markdown_text in one chat.*Stream call.
	MaxStreamTextLength = 12000
)

// Channel types, as Slack spells them in the channel_type field of message events.
const (
	ChannelTypeChannel = "channel" // public channel (ID starts with C)
	ChannelTypeGroup   = "group"   // private channel
	ChannelTypeIM      = "im"      // direct message with the bot (ID starts with D)
)

// Config configures a Server. The zero value is usable: NewServer fills every
// zero field from DefaultConfig.
type Config struct {
	// Addr is the TCP address to listen on. Default "127.0.0.1:0" (a free port).
	Addr string

	// TeamID, TeamName and TeamDomain describe the workspace.
	// Defaults "T0TEAM", "Threadwright", "threadwright".
	TeamID, TeamName, TeamDomain string

	// BotUserID, BotID and BotName describe the bot the tokens belong to.
	// Defaults "U0BOT", "B0BOT", "threadwright". The bot is added to Users.
	BotUserID, BotID, BotName string

	// AppID is the Slack app's ID, sent as api_app_id. Default "A0APP".
	AppID string

	// BotToken (xoxb-) is accepted by every Web API method except
	// apps.connections.open. Default "xoxb-emulator", or a random token when
	// Hardened.
	BotToken string
	// AppToken (xapp-) is accepted by apps.connections.open only.
	// Default "xapp-emulator", or a random token when Hardened.
	AppToken string
	// VerificationToken is the deprecated "token" field of event and
	// interaction payloads. Default "emulator-verification-token", or a random
	// value when Hardened.
	VerificationToken string

	// Hardened protects an emulator that a browser can reach while a person
	// uses it, as `threadwright dev` runs it (docs/playground.md, "Playground security"):
	//   - the tokens default to random values (crypto/rand), new on every run;
	//   - Web API methods take the token from the Authorization header only,
	//     never from a form field or the query, and answer GET only for
	//     methods that change nothing;
	//   - the playground's /ui/ endpoints need the session cookie that the
	//     page (GET /) sets: HttpOnly, SameSite=Strict, random per run;
	//   - the page may not be framed by another site.
	// Every emulator, hardened or not, refuses a Host header other than the
	// bound address or localhost, and a cross-origin POST or WebSocket
	// upgrade (see guard).
	Hardened bool

	// AckTimeout is how long an envelope may stay unacknowledged before it is
	// delivered again with retry_attempt+1 and retry_reason "timeout". Default 3s.
	AckTimeout time.Duration
	// MaxRetries is how many times an unacknowledged envelope is redelivered.
	// Default 3, as Slack does.
	MaxRetries int
	// PingInterval is the time between WebSocket pings on each socket-mode
	// connection. Default 10s; it must be under 30s, slack-go's default
	// deadline for a ping.
	PingInterval time.Duration
	// MaxConnections is the number of concurrent socket-mode connections
	// accepted. Default 10, Slack's limit per app.
	MaxConnections int

	// LenientTextLimit turns off the strict text limit. By default (strict)
	// chat.postMessage, chat.update and chat.postEphemeral answer msg_too_long
	// when text is over StrictTextLength characters, so a bot's message
	// splitting is exercised. When lenient, only MaxTextLength applies.
	LenientTextLimit bool

	// Latency delays the answer of each named Web API method (for example
	// "chat.postMessage"). See also Server.SetLatency.
	Latency map[string]time.Duration

	// Users are the workspace's members. Default: alice (U0ALICE), bob
	// (U0BOB) and a second bot, otherbot (U0OTHERBOT, bot ID B0OTHER).
	Users []User
	// Channels are the workspace's conversations. Default: #general
	// (C0GENERAL), #random (C0RANDOM) and an IM between alice and the bot
	// (D0ALICE).
	Channels []Channel

	// Title is the browser playground's title (see PageURL). Default TeamName.
	Title string
	// Banner, when set, is shown at the top of the playground page, for
	// example "Offline demo model: canned answers".
	Banner string
	// Commands are the app's slash commands, as the playground offers them
	// (it refuses others, as Slack does). Default "/" + BotName.
	Commands []string
	// Shortcuts are the app's message shortcuts, offered by the playground's
	// menu on every message. Default "Workflow commands"
	// (callback_id "threadwright_actions").
	Shortcuts []Shortcut

	// Now tells the time used for message timestamps, event_time and status
	// expiry. Default time.Now. Ack latencies always use the real clock.
	Now func() time.Time
	// Logger receives connection-level diagnostics. Default slog.Default().
	Logger *slog.Logger
}

// User is a member of the emulated workspace.
type User struct {
	ID       string // "U…"
	Name     string // handle, e.g. "alice"
	RealName string
	IsBot    bool
	BotID    string // "B…", for bot users only
	// Locale is what users.info answers with include_locale. Default "en-US".
	Locale string
}

// Channel is a conversation of the emulated workspace. The bot is a member of
// every channel and receives message events from all of them.
type Channel struct {
	ID   string // "C…" for channels, "D…" for IMs
	Name string // without "#"; empty for IMs
	Type string // ChannelTypeChannel (default), ChannelTypeGroup or ChannelTypeIM
	User string // for IMs: the user the bot talks to
	// Purpose is the channel's purpose (conversations.info).
	Purpose string
	// Outsider says the bot is not a member: conversations.info says is_member
	// false, and conversations.replies refuses with not_in_channel.
	Outsider bool
}

// Shortcut is a message shortcut of the app, as its manifest declares it
// (features.shortcuts with type "message").
type Shortcut struct {
	Name       string `json:"name"`
	CallbackID string `json:"callback_id"`
}

// DefaultConfig returns the configuration NewServer uses for zero fields.
func DefaultConfig() Config {
	return Config{
		Addr:              "127.0.0.1:0",
		TeamID:            "T0TEAM",
		TeamName:          "Threadwright",
		TeamDomain:        "threadwright",
		BotUserID:         "U0BOT",
		BotID:             "B0BOT",
		BotName:           "threadwright",
		AppID:             "A0APP",
		BotToken:          "xoxb-emulator",
		AppToken:          "xapp-emulator",
		VerificationToken: "emulator-verification-token",
		AckTimeout:        3 * time.Second,
		MaxRetries:        3,
		PingInterval:      10 * time.Second,
		MaxConnections:    10,
		Users: []User{
			{ID: "U0ALICE", Name: "alice", RealName: "Alice Example"},
			{ID: "U0BOB", Name: "bob", RealName: "Bob Example"},
			{ID: "U0OTHERBOT", Name: "otherbot", RealName: "Other Bot", IsBot: true, BotID: "B0OTHER"},
		},
		Channels: []Channel{
			{ID: "C0GENERAL", Name: "general", Type: ChannelTypeChannel},
			{ID: "C0RANDOM", Name: "random", Type: ChannelTypeChannel},
			{ID: "D0ALICE", Type: ChannelTypeIM, User: "U0ALICE"},
		},
		Shortcuts: []Shortcut{{Name: "Workflow commands", CallbackID: "threadwright_actions"}},
		Now:       time.Now,
		Logger:    slog.Default(),
	}
}

// withDefaults returns c with every zero field taken from DefaultConfig, and
// the bot user added to Users. It refuses a configuration Slack could not
// have: see check.
func (c Config) withDefaults() (Config, error) {
	c = c.filled(DefaultConfig())
	if err := c.check(); err != nil {
		return c, err
	}
	users, err := c.members()
	if err != nil {
		return c, err
	}
	c.Users = users
	channels, err := c.conversations()
	if err != nil {
		return c, err
	}
	c.Channels = channels
	c.Latency = maps.Clone(c.Latency)
	return c, nil
}

// filled returns c with its zero fields taken from d. The tokens of a
// Hardened configuration default to random ones instead of d's.
func (c Config) filled(d Config) Config {
	if c.Hardened {
		d.BotToken, d.AppToken, d.VerificationToken = randomToken("xoxb-"), randomToken("xapp-"), randomToken("")
	}
	c.Addr = cmp.Or(c.Addr, d.Addr)
	c.TeamID = cmp.Or(c.TeamID, d.TeamID)
	c.TeamName = cmp.Or(c.TeamName, d.TeamName)
	c.TeamDomain = cmp.Or(c.TeamDomain, d.TeamDomain)
	c.BotUserID = cmp.Or(c.BotUserID, d.BotUserID)
	c.BotID = cmp.Or(c.BotID, d.BotID)
	c.BotName = cmp.Or(c.BotName, d.BotName)
	c.AppID = cmp.Or(c.AppID, d.AppID)
	c.BotToken = cmp.Or(c.BotToken, d.BotToken)
	c.AppToken = cmp.Or(c.AppToken, d.AppToken)
	c.VerificationToken = cmp.Or(c.VerificationToken, d.VerificationToken)
	c.AckTimeout = cmp.Or(c.AckTimeout, d.AckTimeout)
	c.MaxRetries = cmp.Or(c.MaxRetries, d.MaxRetries)
	c.PingInterval = cmp.Or(c.PingInterval, d.PingInterval)
	c.MaxConnections = cmp.Or(c.MaxConnections, d.MaxConnections)
	if c.Users == nil {
		c.Users = d.Users
	}
	if c.Channels == nil {
		c.Channels = d.Channels
	}
	c.Title = cmp.Or(c.Title, c.TeamName)
	if c.Commands == nil {
		c.Commands = []string{"/" + c.BotName}
	}
	if c.Shortcuts == nil {
		c.Shortcuts = d.Shortcuts
	}
	if c.Now == nil {
		c.Now = d.Now
	}
	if c.Logger == nil {
		c.Logger = d.Logger
	}
	return c
}

// check refuses durations and counts out of range, one token for both kinds,
// and a slash command that is not a slash and a word.
func (c Config) check() error {
	switch {
	case c.AckTimeout < 0:
		return errors.New("emulator: AckTimeout must be positive")
	case c.PingInterval < 0 || c.PingInterval >= 30*time.Second:
		return fmt.Errorf("emulator: PingInterval %v must be between 0 and 30s", c.PingInterval)
	case c.MaxRetries < 0:
		return errors.New("emulator: MaxRetries must not be negative")
	case c.BotToken == c.AppToken:
		return errors.New("emulator: BotToken and AppToken must differ")
	}
	for _, cmd := range c.Commands {
		if !strings.HasPrefix(cmd, "/") || len(cmd) < 2 || strings.ContainsAny(cmd, " \t\n") {
			return fmt.Errorf("emulator: command %q must be a slash and a word", cmd)
		}
	}
	return nil
}

// members returns Users with the bot user first (replacing a user of the
// bot's ID); every user needs an ID.
func (c Config) members() ([]User, error) {
	users := make([]User, 0, len(c.Users)+1)
	users = append(users, User{ID: c.BotUserID, Name: c.BotName, RealName: c.BotName, IsBot: true, BotID: c.BotID})
	for _, u := range c.Users {
		if u.ID == "" {
			return nil, errors.New("emulator: a user has no ID")
		}
		if u.ID != c.BotUserID {
			users = append(users, u)
		}
	}
	return users, nil
}

// conversations returns Channels with their Type filled in (a public
// channel by default); every channel needs an ID.
func (c Config) conversations() ([]Channel, error) {
	channels := make([]Channel, len(c.Channels))
	for i, ch := range c.Channels {
		if ch.ID == "" {
			return nil, errors.New("emulator: a channel has no ID")
		}
		if ch.Type == "" {
			ch.Type = ChannelTypeChannel
		}
		channels[i] = ch
	}
	return channels, nil
}

// randomToken returns prefix followed by 40 random hexadecimal digits.
func randomToken(prefix string) string {
	var b [20]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return prefix + hex.EncodeToString(b[:])
}

// sameToken compares two secrets in constant time.
func sameToken(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}
