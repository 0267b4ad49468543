package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/playground/emulator"
	"github.com/threadwright/threadwright/store"
	"github.com/threadwright/threadwright/testkit/openaitest"
	"github.com/threadwright/threadwright/testkit/samplefiles"
)

// lastUser returns the request's last user message.
func lastUser(r openaitest.Request) openai.ChatCompletionMessage {
	for i := len(r.Chat.Messages) - 1; i >= 0; i-- {
		if r.Chat.Messages[i].Role == openai.ChatMessageRoleUser {
			return r.Chat.Messages[i]
		}
	}
	return openai.ChatCompletionMessage{}
}

// A PNG and a PDF attached to a mention reach the model: the image as an image_url
// part holding the PNG's bytes, the PDF's text fenced as untrusted content. The
// files come with the mention's events (no message is read back); each file is
// downloaded once, with the bot token.
func TestE2EFilesReachTheModel(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["OPENAI_MODEL"] = "gpt-4o-mini" // matches VISION_MODELS' default
	h.start()

	png := samplefiles.PNG(32, 24)
	pdf := samplefiles.PDF(true, "Incident report\nThe disk on db-7 filled up at 03:12.")
	h.ai.Push(openaitest.Response{Text: "The disk filled up."})
	ts, ids, err := h.emu.PostUserFiles(general, alice, "<@U0BOT> what do these say?", "",
		emulator.Upload{Name: "error.png", Content: png}, emulator.Upload{Name: "incident.pdf", Content: pdf, Mimetype: "application/pdf"})
	if err != nil {
		t.Fatal(err)
	}
	h.replies(general, ts, 1)
	req := h.ai.Requests()[0]
	user := lastUser(req)
	var text string
	var images []string
	for _, p := range user.MultiContent {
		switch p.Type {
		case openai.ChatMessagePartTypeText:
			text += p.Text
		case openai.ChatMessagePartTypeImageURL:
			images = append(images, p.ImageURL.URL)
		}
	}
	if want := "data:image/png;base64," + base64.StdEncoding.EncodeToString(png); len(images) != 1 || images[0] != want {
		t.Fatalf("image parts %d, want the PNG as one data URL; request: %.600s", len(images), req.Body)
	}
	for _, want := range []string{"what do these say?", "The disk on db-7 filled up at 03:12.", `<tool_output name="attached_file" trust="untrusted">`, "incident.pdf"} {
		if !strings.Contains(text, want) {
			t.Fatalf("request text lacks %q:\n%s", want, text)
		}
	}
	for _, id := range ids {
		if n := h.emu.FileDownloads(id); n != 1 {
			t.Fatalf("file %s downloaded %d times, want once", id, n)
		}
	}

	// A later question reads the earlier file from the stored message, not from Slack.
	h.ai.Push(openaitest.Response{Text: "At 03:12."})
	h.post(general, alice, "and when did the disk fill up?", ts)
	h.replies(general, ts, 2)
	second := h.ai.Requests()[1]
	if !strings.Contains(string(second.Body), "The disk on db-7 filled up at 03:12.") {
		t.Fatalf("the follow-up's request lacks the earlier PDF's text: %.800s", second.Body)
	}
	if strings.Contains(string(second.Body), base64.StdEncoding.EncodeToString(png)) {
		t.Fatal("the follow-up's request carries the earlier image's bytes")
	}
	for _, id := range ids {
		if n := h.emu.FileDownloads(id); n != 1 {
			t.Fatalf("file %s downloaded %d times after the follow-up, want once", id, n)
		}
	}

	// The checkpoint keeps the files as text and references, never their bytes.
	h.stop()
	st, err := store.Open(context.Background(), store.Options{DataDir: h.dataDir, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cp, err := st.Load(context.Background(), conversation.Key{TeamID: "T0TEAM", ChannelID: general, ThreadTS: ts}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var first *conversation.Message
	for i, m := range cp.Messages {
		if m.Role == conversation.RoleUser && m.SlackTS == ts {
			first = &cp.Messages[i]
		}
		if strings.Contains(m.Text, base64.StdEncoding.EncodeToString(png)) || strings.Contains(string(m.Meta), base64.StdEncoding.EncodeToString(png)) {
			t.Fatal("the checkpoint holds the image's bytes")
		}
	}
	if first == nil || !first.HasFiles() || !strings.Contains(first.Text, "The disk on db-7 filled up") || !strings.Contains(first.Text, "error.png") {
		t.Fatalf("the stored message with files: %+v", first)
	}
}

// A file over FILE_MAX_BYTES (a 200 MB file, by the size Slack reports) is refused
// with a notice in the thread, before any download; the answer comes from the text.
func TestE2EFileTooLargeIsRefused(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	h.ai.Push(openaitest.Response{Text: "I answered from your text."})
	ts, ids, err := h.emu.PostUserFiles(general, alice, "<@U0BOT> summarise this dump", "",
		emulator.Upload{Name: "dump.csv", Content: []byte("a,b\n1,2\n"), Size: 200 << 20})
	if err != nil {
		t.Fatal(err)
	}
	got := h.replies(general, ts, 2)
	if !strings.Contains(got[0].Text, "dump.csv") || !strings.Contains(got[0].Text, "too large") {
		t.Fatalf("first reply %q, want the refusal naming dump.csv", got[0].Text)
	}
	if n := h.emu.FileDownloads(ids[0]); n != 0 {
		t.Fatalf("the refused file was downloaded %d times", n)
	}
	if body := string(h.ai.Requests()[0].Body); strings.Contains(body, "1,2") {
		t.Fatal("the refused file's content reached the model")
	}
}

// TestE2EHostilePDFsLeaveTheBotRunning: PDFs that would end the process that parses
// them (a stack overflow, an allocation of terabytes: no recover catches either) are
// read in a reader process of their own. The bot answers the message, with the files
// refused as unreadable, and goes on answering: the replica, this test binary, is
// still up.
func TestE2EHostilePDFsLeaveTheBotRunning(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start()
	h.ai.Push(openaitest.Response{Text: "I could not read those files."})
	ts, _, err := h.emu.PostUserFiles(general, alice, "<@U0BOT> what do these say?", "",
		emulator.Upload{Name: "loop.pdf", Content: samplefiles.RecursivePDF(), Mimetype: "application/pdf"},
		emulator.Upload{Name: "huge.pdf", Content: samplefiles.HugeXrefPDF(), Mimetype: "application/pdf"})
	if err != nil {
		t.Fatal(err)
	}
	got := h.replies(general, ts, 2)
	for _, name := range []string{"loop.pdf", "huge.pdf"} {
		if !strings.Contains(got[0].Text, name) {
			t.Fatalf("first reply %q, want the files named as not read", got[0].Text)
		}
	}
	if got[1].Text != "I could not read those files." {
		t.Fatalf("answer %q", got[1].Text)
	}
	body := string(h.ai.Requests()[0].Body)
	if n := strings.Count(body, "[not read: "+conversation.FileUnreadable); n != 2 {
		t.Fatalf("the model was told of %d unreadable files, want 2: %.800s", n, body)
	}
	h.ai.Push(openaitest.Response{Text: "Still here."})
	h.post(general, alice, "are you still there?", ts)
	if got := h.replies(general, ts, 3); got[2].Text != "Still here." {
		t.Fatalf("the follow-up's answer %q", got[2].Text)
	}
}

// TestE2ESlowFilesShareOneBudget: the files of one message share a time budget
// (three FETCH_TIMEOUTs): from a file host that never answers, the bot asks for the
// first files, each until FETCH_TIMEOUT, refuses the ones the budget did not reach
// without asking for them, and answers; five such files would take five.
func TestE2ESlowFilesShareOneBudget(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.env["FETCH_TIMEOUT"] = "1s"
	h.start()
	release := h.emu.HoldDownloads()
	t.Cleanup(release)
	h.ai.Push(openaitest.Response{Text: "I could not read those files."})
	var uploads []emulator.Upload
	for i := range 5 {
		uploads = append(uploads, emulator.Upload{Name: fmt.Sprintf("notes-%d.txt", i), Content: []byte("some notes")})
	}
	ts, ids, err := h.emu.PostUserFiles(general, alice, "<@U0BOT> what do these say?", "", uploads...)
	if err != nil {
		t.Fatal(err)
	}
	got := h.replies(general, ts, 2)
	if got[1].Text != "I could not read those files." {
		t.Fatalf("answer %q", got[1].Text)
	}
	asked := 0
	for _, id := range ids {
		asked += h.emu.FileDownloads(id)
	}
	if asked == 0 || asked >= len(ids) {
		t.Fatalf("the bot asked for %d of %d files; want the first few, before the budget ran out", asked, len(ids))
	}
	if n := strings.Count(string(h.ai.Requests()[0].Body), "[not read: "+conversation.FileUnreadable); n != len(ids) {
		t.Fatalf("the model was told of %d unreadable files, want %d", n, len(ids))
	}
}

// A model that cannot see is not sent the image; the person is told.
func TestE2EImageWithoutVision(t *testing.T) {
	h := newHarness(t, emulator.Config{})
	h.start() // OPENAI_MODEL gpt-test matches no VISION_MODELS pattern
	h.ai.Push(openaitest.Response{Text: "From the text: ok."})
	ts, _, err := h.emu.PostUserFiles(general, alice, "<@U0BOT> what is this?", "",
		emulator.Upload{Name: "shot.png", Content: samplefiles.PNG(8, 8)})
	if err != nil {
		t.Fatal(err)
	}
	got := h.replies(general, ts, 2)
	if !strings.Contains(got[0].Text, "cannot see images") {
		t.Fatalf("first reply %q, want the no-vision notice", got[0].Text)
	}
	if len(lastUser(h.ai.Requests()[0]).MultiContent) != 0 {
		t.Fatal("an image part was sent to a model that cannot see")
	}
}

// "start proposal" with a brief attached: the brief (a DOCX) fills the run's input,
// so the bot asks for none and the model writes from the brief.
func TestE2EWorkflowInputFromAttachedBrief(t *testing.T) {
	h := newWorkflowHarness(t)
	h.start()
	brief := samplefiles.DOCX("Brief: a heat-pump retrofit pilot for 40 council flats in Leeds.")
	ts, _, err := h.emu.PostUserFiles(general, alice, "<@U0BOT> start proposal", "",
		emulator.Upload{Name: "brief.docx", Content: brief})
	if err != nil {
		t.Fatal(err)
	}
	h.waitFor("a model request that carries the brief", func() bool {
		for _, r := range h.ai.Requests() {
			if strings.Contains(string(r.Body), "heat-pump retrofit pilot for 40 council flats") {
				return true
			}
		}
		return false
	})
	if tr := h.transcript(ts); strings.Contains(tr, "Before I start, tell me") {
		t.Fatalf("the bot asked for an input the brief gave:\n%s", tr)
	}
}
