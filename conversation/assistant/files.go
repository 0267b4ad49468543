package assistant

import (
	"context"
	"log/slog"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
)

// attachFiles reads the files of the turn's message with Config.Files
// (docs/architecture.md, "Files") and returns the text the model is given and saved
// with the message (the person's text, then each file's fenced block), the images
// shown in this turn only, and whether file content is in the request. A refused
// file is named to the person in one notice before the answer.
func (s *Handler) attachFiles(ctx context.Context, r *turns.Run, text string) (string, []conversation.Image, bool) {
	if s.cfg.Files == nil {
		return text, nil, false
	}
	files, err := s.cfg.Files.ReadFiles(ctx, r.In.Key, r.In.Message)
	if err != nil {
		r.Log.WarnContext(ctx, "could not read the message's files", slog.Any("error", err))
	}
	var (
		b       strings.Builder
		images  []conversation.Image
		refused []conversation.AttachedFile
		read    bool
	)
	b.WriteString(text)
	for _, f := range files {
		if f.Refused != "" {
			refused = append(refused, f)
			r.Log.InfoContext(ctx, "file not given to the model", slog.String("file_id", f.Ref.ID), slog.String("reason", f.Refused))
		}
		if f.Text != "" {
			b.WriteString("\n\n" + f.Text)
			read = true
		}
		if f.Image != nil {
			images = append(images, *f.Image)
		}
	}
	if len(refused) > 0 {
		lang := render.UILang(render.TextLocale(text))
		if _, err := r.Out.PostReply(ctx, render.FilesRefused(lang, refused), false, false); err != nil {
			r.Log.WarnContext(ctx, "could not post the refused files' notice", slog.Any("error", err))
		}
	}
	return b.String(), images, read
}
