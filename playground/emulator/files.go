package emulator

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Files (https://docs.slack.dev/messaging/working-with-files#uploading_files):
// files.getUploadURLExternal, a POST to the upload URL, and
// files.completeUploadExternal, the sequence slack-go's UploadFileContext
// runs; the file is then served at its url_private.

// filesAPI answers the files.* methods and the upload and download URLs, and
// keeps the files the bot uploaded.
type filesAPI struct {
	ws *workspace
	ev *eventsAPI

	// Guarded by ws.mu.
	files     map[string]*File
	fileOrder []string
	// held, when set, holds every download until it is closed (HoldDownloads).
	held chan struct{}
}

// methods is the files family of the Web API.
func (a *filesAPI) methods() map[string]method {
	return map[string]method{
		"files.getUploadURLExternal":   {handle: a.filesGetUploadURLExternal},
		"files.completeUploadExternal": {handle: a.filesCompleteUploadExternal},
		"files.info":                   {handle: a.filesInfo, readOnly: true},
	}
}

// The kinds of file AddCanvas makes: Slack's canvases are files of filetype "quip"
// (pretty_type "Canvas"), its lists files of filetype "list" (pretty_type "List"),
// as files.info describes them (https://docs.slack.dev/reference/methods/files.info;
// https://docs.slack.dev/surfaces/canvases).
const (
	FiletypeCanvas = "quip"
	FiletypeList   = "list"
)

// AddCanvas makes a canvas (filetype FiletypeCanvas) or a list (FiletypeList)
// titled title, by user, shared in channel, as a person makes one in Slack's
// client; app_context_changed can then name it (EntityCanvas, EntityList) and
// files.info describes it. It returns its file ID. Errors: an unknown channel or
// user, another filetype.
func (a *filesAPI) AddCanvas(filetype, channel, user, title string) (string, error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, u, err := a.ws.channelAndUserLocked(channel, user)
	if err != nil {
		return "", err
	}
	pretty := map[string]string{FiletypeCanvas: "Canvas", FiletypeList: "List"}[filetype]
	if pretty == "" {
		return "", fmt.Errorf("add canvas: filetype %q is neither %q nor %q", filetype, FiletypeCanvas, FiletypeList)
	}
	f := &File{ID: a.ws.nextIDLocked("F"), Name: title, Title: title, Channel: ch.ID, Complete: true,
		User: u.ID, Filetype: filetype, PrettyType: pretty, Mimetype: "application/vnd.slack-docs"}
	a.files[f.ID] = f
	a.fileOrder = append(a.fileOrder, f.ID)
	return f.ID, nil
}

// filesInfo implements files.info (https://docs.slack.dev/reference/methods/files.info;
// the shape of its answer: bot/testdata/agent/files.info.json): the file object with
// the conversations it is shared in (channels for public ones, groups for private
// ones, ims), then comments and paging, as slack-go's GetFileInfoContext reads them.
// A file the bot cannot see, shared only in a private channel it is not a member
// of, answers file_not_found, as Slack does; a public channel's file is answered
// whether or not the bot is a member (the caller checks what it may tell).
func (a *filesAPI) filesInfo(r *request) (object, error) {
	if err := r.require("file"); err != nil {
		return nil, err
	}
	f, ok := a.files[r.get("file")]
	if !ok || !f.Complete || f.Channel == "" {
		return nil, errCode("file_not_found")
	}
	ch, err := channelArg(a.ws, f.Channel)
	if err != nil {
		return nil, errCode("file_not_found")
	}
	shares := object{"channels": []string{}, "groups": []string{}, "ims": []string{}}
	switch {
	case ch.Type == ChannelTypeIM:
		shares["ims"] = []string{ch.ID}
	case ch.Type == ChannelTypeGroup && ch.Outsider:
		return nil, errCode("file_not_found")
	case ch.Type == ChannelTypeGroup:
		shares["groups"] = []string{ch.ID}
	default:
		shares["channels"] = []string{ch.ID}
	}
	file := object{}
	raw, err := json.Marshal(wireFileOf(*f, &a.ws.cfg, a.ws.base))
	if err != nil {
		return nil, fmt.Errorf("files.info: %w", err)
	}
	if err := json.Unmarshal(raw, &file); err != nil {
		return nil, fmt.Errorf("files.info: %w", err)
	}
	maps.Copy(file, shares)
	return object{"file": file, "comments": []any{}, "paging": object{"count": 100, "total": 0, "page": 1, "pages": 0}}, nil
}

// filesGetUploadURLExternal implements files.getUploadURLExternal: a file ID
// and a URL on the emulator to POST the content to.
func (a *filesAPI) filesGetUploadURLExternal(r *request) (object, error) {
	if err := r.require("filename", "length"); err != nil {
		return nil, err
	}
	length, err := strconv.Atoi(r.get("length"))
	if err != nil || length <= 0 {
		return nil, errCode("invalid_arguments", "[ERROR] length must be a positive integer")
	}
	f := &File{ID: a.ws.nextIDLocked("F"), Name: r.get("filename"), Length: length}
	a.files[f.ID] = f
	a.fileOrder = append(a.fileOrder, f.ID)
	return object{"upload_url": a.ws.base + "/upload/" + f.ID, "file_id": f.ID}, nil
}

// serveUpload receives a file's content: a multipart form with a "file"
// part, as slack-go sends it, or a raw body.
func (a *filesAPI) serveUpload(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	var content []byte
	var err error
	if file, _, ferr := r.FormFile("file"); ferr == nil {
		content, err = io.ReadAll(file)
		file.Close()
	} else {
		content, err = io.ReadAll(r.Body)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	f, ok := a.files[r.PathValue("file")]
	if !ok || f.Complete {
		http.Error(w, "unknown upload", http.StatusNotFound)
		return
	}
	f.Content = content
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "OK - %d", len(content))
}

// serveFile serves an uploaded file's content at its url_private, to the
// bot token as Slack does.
func (a *filesAPI) serveFile(w http.ResponseWriter, r *http.Request) {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	a.ws.mu.Lock()
	f, ok := a.files[r.PathValue("file")]
	var content []byte
	if ok {
		content = f.Content
		if sameToken(token, a.ws.cfg.BotToken) {
			f.Downloads++
		}
	}
	held := a.held
	a.ws.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-r.Context().Done():
			return // the client gave up
		}
	}
	switch {
	case !sameToken(token, a.ws.cfg.BotToken):
		http.Error(w, "not authed", http.StatusForbidden)
	case !ok || content == nil:
		http.NotFound(w, r)
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Length", strconv.Itoa(len(content)))
		_, _ = w.Write(content)
	}
}

// filesCompleteUploadExternal implements files.completeUploadExternal: the
// uploaded files are shared in channel_id (and thread_ts) in one bot
// message with subtype file_share, which is delivered as a message event.
func (a *filesAPI) filesCompleteUploadExternal(r *request) (object, error) {
	var refs []struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	}
	if err := json.Unmarshal([]byte(r.get("files")), &refs); err != nil || len(refs) == 0 {
		return nil, errCode("invalid_arguments", "[ERROR] files must be a JSON array of {id, title}")
	}
	var files []*File
	for _, ref := range refs {
		f, ok := a.files[ref.ID]
		if !ok || f.Content == nil {
			return nil, errCode("file_not_found")
		}
		if ref.Title != "" {
			f.Title = ref.Title
		} else if f.Title == "" {
			f.Title = f.Name
		}
		files = append(files, f)
	}

	channel := r.get("channel_id")
	if channel == "" {
		channel, _, _ = strings.Cut(r.get("channels"), ",")
	}
	var out []wireFile
	if channel != "" {
		ch, err := channelArg(a.ws, channel)
		if err != nil {
			return nil, err
		}
		text := r.get("initial_comment")
		if err := checkText(text, a.ws.cfg.LenientTextLimit); err != nil {
			return nil, err
		}
		m := a.ws.botRecordLocked(ch)
		m.Subtype, m.Text = "file_share", text
		if raw := r.get("blocks"); raw != "" {
			if err := checkBlocks(raw); err != nil {
				return nil, err
			}
			m.Blocks = json.RawMessage(raw)
		}
		ch.reply(m, r.get("thread_ts"), false)
		for _, f := range files {
			f.Channel, f.ThreadTS, f.Complete = ch.ID, m.ThreadTS, true
			m.Files = append(m.Files, f.clone())
		}
		a.ev.postLocked(ch, m)
	}
	for _, f := range files {
		f.Complete = true
		out = append(out, wireFileOf(*f, &a.ws.cfg, a.ws.base))
	}
	return object{"files": out}, nil
}

// Files returns the files the bot uploaded, oldest first.
func (a *filesAPI) Files() []File {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	out := make([]File, 0, len(a.fileOrder))
	for _, id := range a.fileOrder {
		out = append(out, a.files[id].clone())
	}
	return out
}

// sharedLocked returns the files shared in a conversation, oldest first.
func (a *filesAPI) sharedLocked() []*File {
	var out []*File
	for _, id := range a.fileOrder {
		if f := a.files[id]; f.Complete && f.Content != nil {
			out = append(out, f)
		}
	}
	return out
}

// download returns the name and content of a shared file; content is nil
// for a file not uploaded or not completed.
func (a *filesAPI) download(id string) (name string, content []byte) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	if f, ok := a.files[id]; ok && f.Complete {
		return f.Name, f.Content
	}
	return "", nil
}

// Upload is a file a person attaches to a message (PostUserFiles).
type Upload struct {
	Name    string
	Content []byte
	// Mimetype is the type Slack reports ("" detects it from Content); Size the
	// size it reports (0: len(Content)).
	Mimetype string
	Size     int
}

// PostUserFiles posts text with files as user, the way a person attaches files in
// Slack's client: one message with subtype file_share and a files array
// (fixtures in bot/testdata/file_share*.json), each file served at its url_private
// to the bot token. The bot receives the message event and, when text mentions it
// outside an IM, an app_mention event with the same files. It returns the message's
// ts and the files' ids.
func (a *filesAPI) PostUserFiles(channel, user, text, threadTS string, uploads ...Upload) (ts string, ids []string, err error) {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	ch, u, err := a.ws.channelAndUserLocked(channel, user)
	if err != nil {
		return "", nil, err
	}
	m := &record{Message: Message{Channel: ch.ID, TS: a.ws.nextTSLocked(), User: u.ID, Text: text, ClientMsgID: newUUID()}}
	m.Subtype = "file_share"
	m.Blocks = richTextBlocks(text, blockIDFor(m.TS))
	if threadTS != "" {
		if ch.root(threadTS) == nil {
			return "", nil, fmt.Errorf("post in thread %s: %w", threadTS, ErrMessageNotFound)
		}
		ch.reply(m, threadTS, false)
	}
	for _, up := range uploads {
		f := &File{
			ID: a.ws.nextIDLocked("F"), Name: up.Name, Title: up.Name, Length: len(up.Content), Content: up.Content,
			Channel: ch.ID, ThreadTS: m.ThreadTS, Complete: true, User: u.ID, Mimetype: up.Mimetype, Size: up.Size,
		}
		a.files[f.ID] = f
		a.fileOrder = append(a.fileOrder, f.ID)
		m.Files = append(m.Files, f.clone())
		ids = append(ids, f.ID)
	}
	a.ev.postLocked(ch, m)
	return m.TS, ids, nil
}

// HoldDownloads holds every download of a file (its request counted, its answer not
// sent) until release is called or its client gives up: a slow file host.
func (a *filesAPI) HoldDownloads() (release func()) {
	ch := make(chan struct{})
	a.ws.mu.Lock()
	a.held = ch
	a.ws.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			a.ws.mu.Lock()
			a.held = nil
			a.ws.mu.Unlock()
			close(ch)
		})
	}
}

// FileDownloads returns how many times the bot asked for the file id's url_private
// (held ones too: HoldDownloads).
func (a *filesAPI) FileDownloads(id string) int {
	a.ws.mu.Lock()
	defer a.ws.mu.Unlock()
	if f, ok := a.files[id]; ok {
		return f.Downloads
	}
	return 0
}
