package emulator_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/playground/emulator"
)

// A bot built on slack-go's socketmode client answers an @mention in the
// emulator, unchanged from how it runs against Slack.
func Example() {
	emu, err := emulator.NewServer(emulator.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer emu.Close()

	cfg := emu.Config()
	api := slack.New(cfg.BotToken, slack.OptionAPIURL(emu.URL()), slack.OptionAppLevelToken(cfg.AppToken))
	client := socketmode.New(api)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() { _ = client.RunContext(ctx) }()
	go func() {
		for evt := range client.Events {
			if evt.Type != socketmode.EventTypeEventsAPI {
				continue
			}
			_ = client.Ack(*evt.Request) // ack first
			data := evt.Data.(slackevents.EventsAPIEvent)
			if mention, ok := data.InnerEvent.Data.(*slackevents.AppMentionEvent); ok {
				_, _, _ = api.PostMessage(mention.Channel, slack.MsgOptionText("4", false), slack.MsgOptionTS(mention.TimeStamp))
			}
		}
	}()

	question, _ := emu.PostUserMessage("C0GENERAL", "U0ALICE", "<@U0BOT> what is 2+2?", "")
	if _, err := emu.WaitForMessages(ctx, "C0GENERAL", question, 1); err != nil {
		log.Fatal(err)
	}
	for _, m := range emu.Thread("C0GENERAL", question) {
		fmt.Printf("%s: %s\n", m.User, m.Text)
	}
	// Output:
	// U0ALICE: <@U0BOT> what is 2+2?
	// U0BOT: 4
}

// FailNext and RateLimitNext inject the failures a bot must survive.
func ExampleServer_RateLimitNext() {
	emu, err := emulator.NewServer(emulator.Config{})
	if err != nil {
		log.Fatal(err)
	}
	defer emu.Close()
	cfg := emu.Config()
	api := slack.New(cfg.BotToken, slack.OptionAPIURL(emu.URL()))

	emu.RateLimitNext("chat.postMessage", 30*time.Second)
	emu.FailNext("chat.postMessage", "channel_not_found")
	for range 3 {
		_, _, err := api.PostMessage("C0GENERAL", slack.MsgOptionText("hi", false))
		fmt.Println(err)
	}
	// Output:
	// slack rate limit exceeded, retry after 30s
	// channel_not_found
	// <nil>
}
