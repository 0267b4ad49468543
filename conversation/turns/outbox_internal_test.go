package turns

import (
	"context"
	"testing"

	"github.com/threadwright/threadwright/conversation"
)

type uploadRecorder struct {
	conversation.Messenger
	tags []conversation.Tag
}

func (u *uploadRecorder) Upload(ctx context.Context, _ conversation.Key, _ conversation.File, tag conversation.Tag) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	u.tags = append(u.tags, tag)
	return nil
}

// TestOutboxUploadReplacesOnlyAFile: an earlier run's post of the same ordinal was a
// card, not a file: the upload goes ahead (Tag.Replace empty); a file of the same name
// shared by the earlier run is taken as the upload.
func TestOutboxUploadReplacesOnlyAFile(t *testing.T) {
	rec := &uploadRecorder{}
	o := &Outbox{msgr: rec, key: conversation.Key{TeamID: "T", ChannelID: "C", ThreadTS: "1.0"}, id: "in1", used: map[string]bool{},
		prior: map[int][]conversation.Posted{1: {{TS: "2.0", Tag: conversation.Tag{InputID: "in1", N: 1}, Of: 1, Text: "an evaluation card"}}}}
	if err := o.Upload(context.Background(), conversation.File{Name: "report.md", Content: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	o.loose = []conversation.Posted{{TS: "3.0", File: "report.md"}}
	if err := o.Upload(context.Background(), conversation.File{Name: "report.md", Content: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	if len(rec.tags) != 2 || len(rec.tags[0].Replace) != 0 || len(rec.tags[1].Replace) != 1 || rec.tags[1].Replace[0] != "3.0" {
		t.Fatalf("upload tags %+v; want no Replace for a card's ordinal, the file share's ts for a file of the name", rec.tags)
	}
}
