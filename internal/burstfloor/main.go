package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"sync"
	"syscall"

	openai "github.com/sashabaranov/go-openai"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/threadwright/threadwright/internal/httpclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if f := os.Getenv("THREADWRIGHT_TEST_CPUPROFILE"); f != "" { // BenchmarkBurst's BURST_CPUPROFILE
		out, err := os.Create(f)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			log.Fatal(err)
		}
		defer out.Close()
		defer pprof.StopCPUProfile()
	}
	if err := run(ctx); err != nil {
		log.Print(err)
	}
}

func run(ctx context.Context) error {
	raw, err := os.ReadFile(os.Getenv("FLOOR_REQUEST"))
	if err != nil {
		return err
	}
	var template openai.ChatCompletionRequest
	if err := json.Unmarshal(raw, &template); err != nil {
		return err
	}
	template.Model = cmp.Or(os.Getenv("OPENAI_MODEL"), template.Model)

	api := slack.New(os.Getenv("SLACK_BOT_TOKEN"), slack.OptionAppLevelToken(os.Getenv("SLACK_APP_TOKEN")),
		slack.OptionHTTPClient(httpclient.NewSlack()), slack.OptionAPIURL(os.Getenv("SLACK_API_URL")))
	oc := openai.DefaultConfig(os.Getenv("OPENAI_API_KEY"))
	oc.BaseURL = os.Getenv("OPENAI_BASE_URL")
	tr := httpclient.NewTransport()
	tr.MaxIdleConnsPerHost, tr.MaxIdleConns = 1000, 1000
	oc.HTTPClient = &http.Client{Transport: tr}
	model := openai.NewClientWithConfig(oc)

	conns, err := strconv.Atoi(cmp.Or(os.Getenv("SOCKET_CONNECTIONS"), "2"))
	if err != nil {
		return err
	}
	var turns sync.WaitGroup
	var readers sync.WaitGroup
	for range conns {
		client := socketmode.New(api, socketmode.OptionLog(log.New(io.Discard, "", 0)))
		readers.Go(func() { _ = client.RunContext(ctx) })
		readers.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case ev := <-client.Events:
					if ev.Request == nil {
						continue
					}
					_ = client.AckCtx(ctx, ev.Request.EnvelopeID, nil)
					outer, ok := ev.Data.(slackevents.EventsAPIEvent)
					if !ok {
						continue
					}
					if m, ok := outer.InnerEvent.Data.(*slackevents.AppMentionEvent); ok {
						turns.Go(func() { turn(context.WithoutCancel(ctx), api, model, template, outer.TeamID, m) })
					}
				}
			}
		})
	}
	<-ctx.Done()
	turns.Wait()
	readers.Wait()
	return nil
}

// turn makes one mention's calls (see the package doc); a failure is logged.
func turn(ctx context.Context, api *slack.Client, model *openai.Client, template openai.ChatCompletionRequest, team string, m *slackevents.AppMentionEvent) {
	thread := cmp.Or(m.ThreadTimeStamp, m.TimeStamp)
	if _, err := api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{
		Status: "processing", ChannelID: m.Channel, ThreadTS: thread, Title: m.Text, InitiatorUserID: m.User}); err != nil {
		log.Printf("agents.sessions.setStatus: %v", err)
	}
	req := template
	req.Messages = append([]openai.ChatCompletionMessage(nil), template.Messages...)
	req.Messages[len(req.Messages)-1].Content = m.Text
	stream, err := model.CreateChatCompletionStream(ctx, req)
	if err != nil {
		log.Printf("chat completion: %v", err)
		return
	}
	defer stream.Close()
	var answer []byte
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			log.Printf("chat completion stream: %v", err)
			return
		}
		for _, c := range chunk.Choices {
			answer = append(answer, c.Delta.Content...)
		}
	}
	_, ts, err := api.StartStreamContext(ctx, m.Channel, slack.MsgOptionTS(thread),
		slack.MsgOptionRecipientUserID(m.User), slack.MsgOptionRecipientTeamID(team))
	if err != nil {
		log.Printf("chat.startStream: %v", err)
		return
	}
	if _, _, err := api.StopStreamContext(ctx, m.Channel, ts, slack.MsgOptionMarkdownText(string(answer))); err != nil {
		log.Printf("chat.stopStream: %v", err)
	}
}
