package emulator

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Message is a snapshot of a message stored in the emulator.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // the parent's ts for replies; TS itself for a parent with replies; "" otherwise
	User     string // the author's user ID; the bot user for the bot's messages; "" for bot_message
	BotID    string // set for messages posted by a bot
	Username string // bot_message display name
	Subtype  string // "", "bot_message", "thread_broadcast", "file_share", "tombstone"
	Text     string
	Blocks   json.RawMessage // as posted; nil when the message has none
	// Attachments and Metadata are stored as posted; nil when absent.
	Attachments json.RawMessage
	Metadata    json.RawMessage

	ClientMsgID    string // set for messages typed by users
	ReplyBroadcast bool   // a thread reply also shown in the channel
	Reactions      []Reaction
	Edited         bool
	EditedTS       string
	Streaming      bool // a chat.startStream message not stopped yet
	// TaskDisplayMode is chat.startStream's task_display_mode ("", "timeline" or
	// "plan"), PlanTitle the last plan_update's title, Tasks the task cards as
	// their last task_update left them (in the order they first came), and
	// TaskUpdates every task_update in the order it came.
	TaskDisplayMode string
	PlanTitle       string
	Tasks           []Task
	TaskUpdates     []Task
	Files           []File
	ReplyCount      int // number of visible replies, for a thread's parent

	// Ephemeral messages only.
	Ephemeral bool
	Recipient string // the only user who sees an ephemeral message
}

// Task is a task card of a streamed message, as its task_update chunks left it
// (https://docs.slack.dev/reference/methods/chat.appendStream, "chunks"; the
// task_update shape of Slack's SDK types).
type Task struct {
	ID      string       `json:"id"`
	Title   string       `json:"title"`
	Status  string       `json:"status"`
	Details string       `json:"details,omitempty"`
	Output  string       `json:"output,omitempty"`
	Sources []TaskSource `json:"sources,omitempty"`
}

// TaskSource is a task's URL source.
type TaskSource struct {
	Type string `json:"type"`
	URL  string `json:"url"`
	Text string `json:"text"`
}

// File is a file the bot uploaded with files.getUploadURLExternal, a POST
// to the upload URL, and files.completeUploadExternal
// (https://docs.slack.dev/messaging/working-with-files#uploading_files), the
// sequence slack-go's UploadFileContext runs.
type File struct {
	ID       string
	Name     string
	Title    string
	Length   int    // the length announced to files.getUploadURLExternal
	Content  []byte // nil until uploaded
	Channel  string // where it was shared; "" until completed
	ThreadTS string
	Complete bool
	// User is who shared it ("" for the bot); Mimetype its type ("" detects it from
	// Content); Size the size its file object reports (0: len(Content)), so a test can
	// share a file said to be larger than it is (PostUserFiles).
	User     string
	Mimetype string
	Size     int
	// Downloads counts the reads of its url_private.
	Downloads int
	// Filetype and PrettyType name a file that is not an upload ("" for an upload:
	// from its name's extension): a canvas or a list (AddCanvas).
	Filetype, PrettyType string
}

func (f *File) clone() File {
	c := *f
	c.Content = slices.Clone(f.Content)
	return c
}

// wireFile is a file object as messages and files.completeUploadExternal
// render it (fixtures/slack/api/files.completeUploadExternal.json).
type wireFile struct {
	ID                 string `json:"id"`
	Created            int64  `json:"created"`
	Timestamp          int64  `json:"timestamp"`
	Name               string `json:"name"`
	Title              string `json:"title"`
	Mimetype           string `json:"mimetype"`
	Filetype           string `json:"filetype"`
	PrettyType         string `json:"pretty_type"`
	User               string `json:"user"`
	UserTeam           string `json:"user_team"`
	Size               int    `json:"size"`
	Mode               string `json:"mode"`
	IsExternal         bool   `json:"is_external"`
	IsPublic           bool   `json:"is_public"`
	URLPrivate         string `json:"url_private"`
	URLPrivateDownload string `json:"url_private_download"`
	Permalink          string `json:"permalink"`
}

// Reaction is an emoji reaction on a message.
type Reaction struct {
	Name  string // without colons
	Users []string
}

func (m *Message) clone() Message {
	c := *m
	c.Blocks = slices.Clone(m.Blocks)
	c.Attachments = slices.Clone(m.Attachments)
	c.Metadata = slices.Clone(m.Metadata)
	c.Files = slices.Clone(m.Files)
	c.Tasks = cloneTasks(m.Tasks)
	c.TaskUpdates = cloneTasks(m.TaskUpdates)
	c.Reactions = make([]Reaction, len(m.Reactions))
	for i, r := range m.Reactions {
		c.Reactions[i] = Reaction{Name: r.Name, Users: slices.Clone(r.Users)}
	}
	if len(c.Reactions) == 0 {
		c.Reactions = nil
	}
	return c
}

// record is a stored message with the state only the emulator sees.
type record struct {
	Message
	deleted       bool
	parentUserID  string // for replies: the author of the thread's parent
	streamed      bool   // started with chat.startStream: Text is markdown
	streamAppends int
	// streamStart is when chat.startStream made the message (Config.Now).
	streamStart time.Time
}

// wireMessage is a message as the Web API and the Events API render it, in
// the shape of Slack's samples (fixtures/slack/events, "message").
type wireMessage struct {
	Type         string          `json:"type"`
	Subtype      string          `json:"subtype,omitempty"`
	Hidden       bool            `json:"hidden,omitempty"`
	User         string          `json:"user,omitempty"`
	BotID        string          `json:"bot_id,omitempty"`
	AppID        string          `json:"app_id,omitempty"`
	Username     string          `json:"username,omitempty"`
	BotProfile   *botProfile     `json:"bot_profile,omitempty"`
	Team         string          `json:"team,omitempty"`
	Text         string          `json:"text"`
	Blocks       json.RawMessage `json:"blocks,omitempty"`
	Attachments  json.RawMessage `json:"attachments,omitempty"`
	Metadata     json.RawMessage `json:"metadata,omitempty"`
	Files        []wireFile      `json:"files,omitempty"`
	Upload       bool            `json:"upload,omitempty"`
	ClientMsgID  string          `json:"client_msg_id,omitempty"`
	TS           string          `json:"ts"`
	ThreadTS     string          `json:"thread_ts,omitempty"`
	ParentUserID string          `json:"parent_user_id,omitempty"`
	Edited       *edited         `json:"edited,omitempty"`
	Reactions    []wireReaction  `json:"reactions,omitempty"`
	ReplyCount   int             `json:"reply_count,omitempty"`
	ReplyUsers   []string        `json:"reply_users,omitempty"`
	LatestReply  string          `json:"latest_reply,omitempty"`
}

type botProfile struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	AppID   string `json:"app_id"`
	TeamID  string `json:"team_id"`
	Deleted bool   `json:"deleted"`
	Updated int64  `json:"updated"`
}

type edited struct {
	User string `json:"user"`
	TS   string `json:"ts"`
}

type wireReaction struct {
	Name  string   `json:"name"`
	Users []string `json:"users"`
	Count int      `json:"count"`
}

// wireOf renders a stored message for the Web API and events; replies are
// its visible replies (none for a reply), cfg and base the server's.
func wireOf(m *record, replies []*record, cfg *Config, base string) wireMessage {
	w := wireMessage{
		Type:         "message",
		Subtype:      m.Subtype,
		User:         m.User,
		BotID:        m.BotID,
		Username:     m.Username,
		Text:         m.Text,
		Blocks:       m.Blocks,
		Attachments:  m.Attachments,
		Metadata:     m.Metadata,
		ClientMsgID:  m.ClientMsgID,
		TS:           m.TS,
		ThreadTS:     m.ThreadTS,
		ParentUserID: m.parentUserID,
		Hidden:       m.Subtype == "tombstone",
	}
	if m.User != "" {
		w.Team = cfg.TeamID
	}
	if m.BotID == cfg.BotID {
		w.AppID = cfg.AppID
		w.BotProfile = &botProfile{ID: cfg.BotID, Name: cfg.BotName, AppID: cfg.AppID, TeamID: cfg.TeamID}
	}
	if m.Edited {
		editor := m.User
		if editor == "" {
			editor = m.BotID
		}
		w.Edited = &edited{User: editor, TS: m.EditedTS}
	}
	for _, r := range m.Reactions {
		w.Reactions = append(w.Reactions, wireReaction{Name: r.Name, Users: r.Users, Count: len(r.Users)})
	}
	for _, f := range m.Files {
		w.Files = append(w.Files, wireFileOf(f, cfg, base))
		w.Upload = true
	}
	if m.ThreadTS == "" {
		if len(replies) > 0 {
			w.ThreadTS = m.TS
			w.ReplyCount = len(replies)
			w.LatestReply = replies[len(replies)-1].TS
			for _, r := range replies {
				author := r.User
				if author == "" {
					author = r.BotID
				}
				if author != "" && !slices.Contains(w.ReplyUsers, author) {
					w.ReplyUsers = append(w.ReplyUsers, author)
				}
			}
		}
	}
	return w
}

// wireFileOf renders a file as messages and files.completeUploadExternal
// show it, its URLs on base.
func wireFileOf(f File, cfg *Config, base string) wireFile {
	ext := strings.TrimPrefix(path.Ext(f.Name), ".")
	mimetype := http.DetectContentType(f.Content)
	if ext == "md" || ext == "txt" {
		mimetype = "text/plain"
	}
	mimetype = cmp.Or(f.Mimetype, mimetype)
	return wireFile{
		ID:                 f.ID,
		Created:            cfg.Now().Unix(),
		Timestamp:          cfg.Now().Unix(),
		Name:               f.Name,
		Title:              f.Title,
		Mimetype:           mimetype,
		Filetype:           cmp.Or(f.Filetype, ext),
		PrettyType:         cmp.Or(f.PrettyType, strings.ToUpper(ext)),
		User:               cmp.Or(f.User, cfg.BotUserID),
		UserTeam:           cfg.TeamID,
		Size:               cmp.Or(f.Size, len(f.Content)),
		Mode:               "hosted",
		URLPrivate:         base + "/files/" + f.ID + "/" + f.Name,
		URLPrivateDownload: base + "/files/" + f.ID + "/download/" + f.Name,
		Permalink:          fmt.Sprintf("https://%s.slack.com/files/%s/%s/%s", cfg.TeamDomain, cfg.BotUserID, f.ID, f.Name),
	}
}

// mentionPattern matches a user mention in message text: <@U123> or <@U123|name>.
var mentionPattern = regexp.MustCompile(`<@([UW][A-Z0-9]+)(?:\|[^>]*)?>`)

// mentions reports whether text mentions userID.
func mentions(text, userID string) bool {
	for _, m := range mentionPattern.FindAllStringSubmatch(text, -1) {
		if m[1] == userID {
			return true
		}
	}
	return false
}

// richTextBlocks renders text the way Slack's clients send a typed message:
// one rich_text block whose section holds text and user elements.
func richTextBlocks(text, blockID string) json.RawMessage {
	type element struct {
		Type   string `json:"type"`
		Text   string `json:"text,omitempty"`
		UserID string `json:"user_id,omitempty"`
	}
	var elements []element
	rest := text
	for _, loc := range mentionPattern.FindAllStringSubmatchIndex(text, -1) {
		offset := len(text) - len(rest)
		if before := rest[:loc[0]-offset]; before != "" {
			elements = append(elements, element{Type: "text", Text: before})
		}
		elements = append(elements, element{Type: "user", UserID: text[loc[2]:loc[3]]})
		rest = text[loc[1]:]
	}
	if rest != "" {
		elements = append(elements, element{Type: "text", Text: rest})
	}
	blocks := []map[string]any{{
		"type":     "rich_text",
		"block_id": blockID,
		"elements": []map[string]any{{"type": "rich_text_section", "elements": elements}},
	}}
	b, _ := json.Marshal(blocks) // cannot fail: only strings and maps
	return b
}

// tsMicros converts a Slack timestamp ("1700000000.000100") to microseconds.
func tsMicros(ts string) (int64, bool) {
	sec, frac, ok := strings.Cut(ts, ".")
	if !ok || len(frac) != 6 {
		return 0, false
	}
	s, err1 := strconv.ParseInt(sec, 10, 64)
	f, err2 := strconv.ParseInt(frac, 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return s*1_000_000 + f, true
}

// formatTS renders microseconds as a Slack timestamp.
func formatTS(micros int64) string {
	return strconv.FormatInt(micros/1_000_000, 10) + "." + leftPad(strconv.FormatInt(micros%1_000_000, 10), 6)
}

func leftPad(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return strings.Repeat("0", n-len(s)) + s
}

func cloneTasks(ts []Task) []Task {
	if ts == nil {
		return nil
	}
	out := make([]Task, len(ts))
	for i, t := range ts {
		t.Sources = slices.Clone(t.Sources)
		out[i] = t
	}
	return out
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
