package emulator_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/playground/emulator"
)

// TestFilesInfoFitsTheSample: files.info answers a canvas in the shape of the sample
// (bot/testdata/agent/files.info.json, sources in its SOURCES.md), every field of the
// sample present, and slack-go's GetFileInfoContext reads its title, filetype and
// channels; a file shared only in a private channel the bot is not in is
// file_not_found, as is an unknown file.
func TestFilesInfoFitsTheSample(t *testing.T) {
	channels := append(emulator.DefaultConfig().Channels, emulator.Channel{ID: "G0HIDDEN", Name: "hidden", Type: emulator.ChannelTypeGroup, Outsider: true})
	emu := MustStart(t, emulator.Config{Channels: channels})
	id, err := emu.AddCanvas(emulator.FiletypeCanvas, "C0RANDOM", "U0ALICE", "Q4 launch plan")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "bot", "testdata", "agent", "files.info.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sample map[string]any
	if err := json.Unmarshal(raw, &sample); err != nil {
		t.Fatal(err)
	}
	got := postForm(t, emu, "files.info", url.Values{"token": {emu.Config().BotToken}, "file": {id}})
	for k := range sample {
		if _, ok := got[k]; !ok {
			t.Errorf("files.info lacks %q", k)
		}
	}
	file, _ := got["file"].(map[string]any)
	for k := range sample["file"].(map[string]any) {
		if _, ok := file[k]; !ok {
			t.Errorf("files.info's file lacks %q", k)
		}
	}

	api := slack.New(emu.Config().BotToken, slack.OptionAPIURL(emu.URL()))
	f, _, _, err := api.GetFileInfoContext(context.Background(), id, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Title != "Q4 launch plan" || f.Filetype != emulator.FiletypeCanvas || len(f.Channels) != 1 || f.Channels[0] != "C0RANDOM" {
		t.Errorf("file %+v; want the canvas, shared in C0RANDOM", f)
	}

	hidden, err := emu.AddCanvas(emulator.FiletypeList, "G0HIDDEN", "U0ALICE", "Salaries")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{hidden, "F0NONE"} {
		var se slack.SlackErrorResponse
		if _, _, _, err := api.GetFileInfoContext(context.Background(), file, 0, 0); !errors.As(err, &se) || se.Err != "file_not_found" {
			t.Errorf("files.info %s: %v; want file_not_found", file, err)
		}
	}
}
