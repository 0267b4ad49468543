package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"strings"

	"github.com/threadwright/threadwright/agents"
	"github.com/threadwright/threadwright/agents/web"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/internal/attachment"
)

// slackFileHost is where Slack serves the url_private of files.
const slackFileHost = "files.slack.com"

// maxFilesPerMessage bounds the files of one message read (Slack allows 10).
const maxFilesPerMessage = 10

// messageFiles reads a message's files back from Slack (bot.Messenger.MessageFiles).
type messageFiles interface {
	MessageFiles(ctx context.Context, key conversation.Key, ts string) ([]conversation.FileRef, error)
}

// fileReader is the conversation.FileReader of the run (docs/architecture.md,
// "Files"): it finds a message's files (the event's, or read back), refuses one over
// FILE_MAX_BYTES by the size Slack reports before downloading it, downloads the rest
// with the bot token from Slack's file host (web.Downloader: fetch_url's address
// guard and FETCH_TIMEOUT), reads them with internal/attachment, and fences their
// text as untrusted tool output.
type fileReader struct {
	slack    messageFiles
	download *web.Downloader
	limits   attachment.Limits
	maxBytes int64
	vision   bool // OPENAI_MODEL matches VISION_MODELS
	log      *slog.Logger
}

// newFileReader builds the run's fileReader on c; slack reads messages back.
func newFileReader(c *Config, slack messageFiles, log *slog.Logger) (*fileReader, error) {
	hosts := []string{slackFileHost}
	if u, err := url.Parse(c.SlackAPIURL); err == nil && u.Host != "" && u.Hostname() != "slack.com" {
		hosts = append(hosts, u.Host) // the emulator serves files on its own host
	}
	d, err := web.NewDownloader(c.fetchConfig(), hosts, c.SlackBotToken, c.FileMaxBytes)
	if err != nil {
		return nil, err
	}
	return &fileReader{
		slack: slack, download: d, maxBytes: c.FileMaxBytes, log: log,
		limits: attachment.Limits{MaxPages: c.FileMaxPages, MaxPixels: c.FileMaxPixels, Timeout: c.FetchTimeout},
		vision: modelMatches(c.VisionModels, c.OpenAIModel),
	}, nil
}

// modelMatches reports whether model matches one of patterns (path.Match, where *
// matches any run of characters but "/"; case ignored).
func modelMatches(patterns []string, model string) bool {
	model = strings.ToLower(model)
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ToLower(strings.TrimSpace(p)), model); ok {
			return true
		}
	}
	return false
}

// ReadFiles implements conversation.FileReader.
func (f *fileReader) ReadFiles(ctx context.Context, key conversation.Key, msg *conversation.UserMessage) ([]conversation.AttachedFile, error) {
	if msg == nil {
		return nil, nil
	}
	refs := msg.Files
	if len(refs) == 0 && msg.FileShare && f.slack != nil {
		var err error
		if refs, err = f.slack.MessageFiles(ctx, key, msg.TS); err != nil {
			return nil, fmt.Errorf("read the message's files: %w", err)
		}
	}
	refs = refs[:min(len(refs), maxFilesPerMessage)]
	if budget := filesBudgetTimes * f.limits.Timeout; budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, budget)
		defer cancel()
	}
	out := make([]conversation.AttachedFile, 0, len(refs))
	for _, ref := range refs {
		out = append(out, f.readOne(ctx, ref))
	}
	return out, nil
}

// filesBudgetTimes bounds the time a message's files take together, in FETCH_TIMEOUTs
// (each file's download and its reading have one each): ten slow files would hold
// the turn for ten times two. A file not read by then is refused as unreadable.
const filesBudgetTimes = 3

// readOne reads one file: refused by its size before any download, or downloaded
// and read.
func (f *fileReader) readOne(ctx context.Context, ref conversation.FileRef) conversation.AttachedFile {
	out := conversation.AttachedFile{Ref: ref}
	refuse := func(why string, err error) conversation.AttachedFile {
		out.Refused = why
		out.Text = fileBlock(ref, fmt.Sprintf("[not read: %s]", why))
		if err != nil {
			f.log.InfoContext(ctx, "attached file not read", slog.String("file_id", ref.ID), slog.Any("error", err))
		}
		return out
	}
	if ref.Size > f.maxBytes {
		return refuse(conversation.FileTooLarge, fmt.Errorf("%d bytes, more than FILE_MAX_BYTES %d", ref.Size, f.maxBytes))
	}
	if ref.URL == "" {
		return refuse(conversation.FileUnreadable, errors.New("no url_private"))
	}
	if ctx.Err() != nil {
		return refuse(conversation.FileUnreadable, fmt.Errorf("not reached: the message's files took their %v", filesBudgetTimes*f.limits.Timeout))
	}
	data, err := f.download.Download(ctx, ref.URL)
	if errors.Is(err, web.ErrTooLarge) {
		return refuse(conversation.FileTooLarge, err)
	}
	if err != nil {
		return refuse(conversation.FileUnreadable, err)
	}
	file, err := attachment.Read(ctx, ref.Name, ref.MIME, data, f.limits)
	switch {
	case errors.Is(err, attachment.ErrTooLarge):
		return refuse(conversation.FileTooLarge, err)
	case errors.Is(err, attachment.ErrUnsupported):
		return refuse(conversation.FileUnsupported, err)
	case err != nil:
		return refuse(conversation.FileUnreadable, err)
	}
	if file.Kind == attachment.KindImage {
		if !f.vision {
			return refuse(conversation.FileNoVision, nil)
		}
		out.Image = &conversation.Image{Name: ref.Name, MIME: file.MIME, Data: file.Data}
		out.Text = fileBlock(ref, fmt.Sprintf("[an image, %d×%d pixels, shown to you with this message]", file.Width, file.Height))
		return out
	}
	text := file.Text
	switch {
	case file.Format == "pdf" && file.PagesRead < file.Pages:
		text += fmt.Sprintf("\n\n[cut: only the first %d of %d pages were read]", file.PagesRead, file.Pages)
	case file.Cut:
		text += "\n\n[cut: the file is longer; only its beginning was read]"
	}
	out.Text = fileBlock(ref, text)
	return out
}

// fileBlock fences a file's content for the model as untrusted data, like a fetched
// page's (agents.ToolOutput; docs/tools.md, "Tool policy").
func fileBlock(ref conversation.FileRef, text string) string {
	return agents.ToolOutput("attached_file", agents.TrustUntrusted, fmt.Sprintf("File: %s (id %s)\n\n%s", ref.Name, ref.ID, text))
}
