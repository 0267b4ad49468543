package emulator_test

import (
	"errors"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/playground/emulator"
)

func TestConfig(t *testing.T) {
	t.Run("Defaults", func(t *testing.T) {
		emu := MustStart(t, emulator.Config{})
		cfg := emu.Config()
		if cfg.TeamID != "T0TEAM" || cfg.BotUserID != "U0BOT" || cfg.BotID != "B0BOT" || cfg.AppID != "A0APP" ||
			cfg.BotToken != "xoxb-emulator" || cfg.AppToken != "xapp-emulator" || cfg.AckTimeout != 3*time.Second ||
			cfg.PingInterval != 10*time.Second || cfg.MaxConnections != 10 || cfg.MaxRetries != 3 || cfg.LenientTextLimit {
			t.Errorf("defaults = %+v", cfg)
		}
		users := emu.Users()
		if len(users) != 4 || users[0].ID != "U0BOT" || !users[0].IsBot || users[1].ID != "U0ALICE" || users[3].BotID != "B0OTHER" {
			t.Errorf("users = %+v", users)
		}
		channels := emu.Channels()
		if len(channels) != 3 || channels[2].ID != "D0ALICE" || channels[2].Type != emulator.ChannelTypeIM {
			t.Errorf("channels = %+v", channels)
		}
	})
	t.Run("PingIntervalTooLong", func(t *testing.T) {
		if _, err := emulator.NewServer(emulator.Config{PingInterval: 30 * time.Second}); err == nil {
			t.Error("NewServer accepted a 30s ping interval")
		}
	})
	t.Run("AddUserAndChannel", func(t *testing.T) {
		emu := MustStart(t, emulator.Config{})
		emu.AddUser(emulator.User{ID: "U0CAROL", Name: "carol"})
		emu.AddChannel(emulator.Channel{ID: "C0NEW", Name: "new"})
		if _, err := emu.PostUserMessage("C0NEW", "U0CAROL", "hi", ""); err != nil {
			t.Fatal(err)
		}
		if u := emu.Users(); u[len(u)-1].ID != "U0CAROL" {
			t.Errorf("users = %+v", u)
		}
		if _, err := emu.PostUserMessage("C0NOPE", "U0CAROL", "hi", ""); !errors.Is(err, emulator.ErrChannelNotFound) {
			t.Errorf("unknown channel: %v", err)
		}
		if _, err := emu.PostUserMessage("C0NEW", "U0NOPE", "hi", ""); !errors.Is(err, emulator.ErrUserNotFound) {
			t.Errorf("unknown user: %v", err)
		}
		if _, err := emu.PostUserMessage("C0NEW", "U0CAROL", "hi", "1.000001"); !errors.Is(err, emulator.ErrMessageNotFound) {
			t.Errorf("unknown thread: %v", err)
		}
	})
}

func TestSubscribe(t *testing.T) {
	emu := MustStart(t, emulator.Config{})
	updates, cancel := emu.Subscribe()
	ts, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "hi", "")
	if _, _, err := NewAPI(emu).PostMessage("C0GENERAL", slack.MsgOptionText("hello", false), slack.MsgOptionTS(ts)); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	var replies []*emulator.Message
	timeout := time.After(5 * time.Second)
	for len(replies) == 0 {
		select {
		case u := <-updates:
			kinds = append(kinds, u.Kind)
			if u.Kind == emulator.UpdateMessage && u.ThreadTS == ts {
				replies = append(replies, u.Message)
			}
		case <-timeout:
			t.Fatalf("updates so far: %v", kinds)
		}
	}
	if replies[0].Text != "hello" || replies[0].BotID != "B0BOT" {
		t.Errorf("update message = %+v", replies[0])
	}
	cancel()
	for range updates { // drained and closed by cancel
	}
}
