package assistant

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
)

// attached is what attachFiles made of a message's files.
type attached struct {
	blocks string // each file's fenced block, each after a blank line; "" without files
	images []conversation.Image
	meta   json.RawMessage // conversation.FilesMeta, nil without files
}

// attachFiles reads the files of the turn's message with Config.Files
// (docs/architecture.md, "Files") and returns the files' blocks, given to the model
// and saved with the message after its text (the person's text, which also picks
// the notice's language), the images shown in this turn only, and the message's Meta
// naming the files. A refused file is named to the person in one notice before the
// answer.
func (s *Handler) attachFiles(ctx context.Context, r *turns.Run, text string) attached {
	if s.cfg.Files == nil {
		return attached{}
	}
	files, err := s.cfg.Files.ReadFiles(ctx, r.In.Key, r.In.Message)
	if err != nil {
		r.Log.WarnContext(ctx, "could not read the message's files", slog.Any("error", err))
	}
	var (
		b       strings.Builder
		images  []conversation.Image
		refused []conversation.AttachedFile
		meta    conversation.FilesMeta
	)
	for _, f := range files {
		meta.Files = append(meta.Files, conversation.FileRef{ID: f.Ref.ID, Name: f.Ref.Name})
		if f.Refused != "" {
			refused = append(refused, f)
			r.Log.InfoContext(ctx, "file not given to the model", slog.String("file_id", f.Ref.ID), slog.String("reason", f.Refused))
		}
		if f.Text != "" {
			b.WriteString("\n\n" + f.Text)
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
	out := attached{blocks: b.String(), images: images}
	if len(meta.Files) > 0 {
		out.meta, _ = json.Marshal(meta) // ids and names: always encodable
	}
	return out
}

// anyFiles reports whether a message of msgs came with files: their content is
// untrusted (docs/tools.md, "Tool policy").
func anyFiles(msgs []conversation.Message) bool {
	for _, m := range msgs {
		if m.HasFiles() {
			return true
		}
	}
	return false
}
