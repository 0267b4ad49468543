package conversation

import (
	"context"
	"encoding/json"
)

// FileRef is a file shared in a person's message: the fields of Slack's file object
// (https://docs.slack.dev/reference/objects/file-object) a turn needs to read it.
type FileRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// MIME is the file's mimetype; Size its size in bytes, as Slack reports it.
	MIME string `json:"mimetype,omitempty"`
	Size int64  `json:"size,omitempty"`
	// URL is its url_private, read with the bot token (files:read).
	URL string `json:"url_private,omitempty"`
}

// Why a file was not given to the model (AttachedFile.Refused).
const (
	FileTooLarge    = "too_large"   // over the size, pixel or byte bound
	FileUnsupported = "unsupported" // a kind of file that is not read (an archive, audio)
	FileUnreadable  = "unreadable"  // malformed, encrypted, not read in time, or not downloaded
	FileNoVision    = "no_vision"   // an image, and the model cannot see images
)

// AttachedFile is what a turn made of one file of a person's message
// (docs/architecture.md, "Files").
type AttachedFile struct {
	Ref FileRef
	// Text is what the model is given of the file, fenced as untrusted content: its
	// text, or for an image a line that names it. It is saved with the message, so a
	// later turn reads it from the checkpoint, not from Slack.
	Text string
	// Image is the image the model is shown in this turn only; it is never saved.
	Image *Image
	// Refused says why the file was not given to the model ("" when it was).
	Refused string
}

// Image is an image part of a request (OpenAI's image_url content part).
type Image struct {
	Name string
	// MIME is its type ("image/png"); Data its bytes.
	MIME string
	Data []byte
}

// FileReader reads the files of a person's message (implemented in cmd/threadwright
// on the Slack file download, the fetch guard and internal/attachment). It returns one
// AttachedFile per file, refused ones included, and an error only when the message
// itself could not be read.
type FileReader interface {
	ReadFiles(ctx context.Context, key Key, msg *UserMessage) ([]AttachedFile, error)
}

// FilesMeta is the Meta of a person's message that came with files: the files by id
// and name, never their bytes (their text is in the message's Text).
type FilesMeta struct {
	Files []FileRef `json:"files"`
}

// HasFiles reports whether m is a person's message saved with files (FilesMeta), so
// that its text holds untrusted content.
func (m Message) HasFiles() bool {
	if m.Role != RoleUser || len(m.Meta) == 0 {
		return false
	}
	var meta FilesMeta
	return json.Unmarshal(m.Meta, &meta) == nil && len(meta.Files) > 0
}
