package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
	"golang.org/x/sync/semaphore"

	"github.com/threadwright/threadwright/internal/httpclient"
	"github.com/threadwright/threadwright/internal/profiling"
)

func main() {
	os.Exit(profiled(func() int {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
		defer stop()
		if err := run(ctx); err != nil {
			log.Print(err)
			return 1
		}
		return 0
	}))
}

// profiled runs f, writing the process's CPU profile meanwhile to the file
// profiling.CPUEnv names (BenchmarkBurst's BURST_CPUPROFILE), if set.
func profiled(f func() int) int {
	file := os.Getenv(profiling.CPUEnv)
	if file == "" {
		return f()
	}
	stop, err := profiling.StartCPU(file)
	if err != nil {
		log.Print(err)
		return 1
	}
	code := f()
	if err := stop(); err != nil {
		log.Print(err)
		return 1
	}
	return code
}

// turnTimeout bounds one mention's calls, as MODEL_TIMEOUT and the Slack calls'
// own bounds do a turn's.
const turnTimeout = 30 * time.Second

// run is the floor until ctx ends (see the package doc). Errors: an unreadable
// FLOOR_REQUEST, a bad MODEL_MAX_CONCURRENT or SOCKET_CONNECTIONS.
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
	for i, t := range template.Tools {
		// The bot sends each tool's parameters as JSON it encoded once
		// (json.RawMessage), not as a map encoded again for each request.
		if t.Function == nil {
			continue
		}
		params, err := json.Marshal(t.Function.Parameters)
		if err != nil {
			return err
		}
		f := *t.Function
		f.Parameters = json.RawMessage(params)
		template.Tools[i].Function = &f
	}
	limit, err := strconv.Atoi(cmp.Or(os.Getenv("MODEL_MAX_CONCURRENT"), "500")) // the bot's default
	if err != nil || limit < 1 {
		return fmt.Errorf("MODEL_MAX_CONCURRENT %q: a whole number above 0", os.Getenv("MODEL_MAX_CONCURRENT"))
	}

	api := slack.New(os.Getenv("SLACK_BOT_TOKEN"), slack.OptionAppLevelToken(os.Getenv("SLACK_APP_TOKEN")),
		slack.OptionHTTPClient(httpclient.NewSlack()), slack.OptionAPIURL(os.Getenv("SLACK_API_URL")))
	oc := openai.DefaultConfig(os.Getenv("OPENAI_API_KEY"))
	oc.BaseURL = os.Getenv("OPENAI_BASE_URL")
	oc.HTTPClient = &http.Client{Transport: httpclient.NewModelTransport(limit)} // as agents.NewClient sets it up
	model := &modelClient{api: openai.NewClientWithConfig(oc), slots: semaphore.NewWeighted(int64(limit))}

	conns, err := strconv.Atoi(cmp.Or(os.Getenv("SOCKET_CONNECTIONS"), "2"))
	if err != nil {
		return err
	}
	var turns, readers sync.WaitGroup
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
						turns.Go(func() {
							tctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), turnTimeout)
							defer cancel()
							turn(tctx, api, model, template, outer.TeamID, m)
						})
					}
				}
			}
		})
	}
	<-ctx.Done()
	readers.Wait() // no turn starts after this
	turns.Wait()
	return nil
}

// modelClient is go-openai's client with at most its slots' calls in flight, as
// MODEL_MAX_CONCURRENT bounds the bot's.
type modelClient struct {
	api   *openai.Client
	slots *semaphore.Weighted
}

// chunk is what the floor reads of a streamed chat completion's chunk: the bot
// decodes each into a type of its own too (RecvRaw), not into go-openai's.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
}

// complete streams the chat completion req and returns its content.
func (m *modelClient) complete(ctx context.Context, req openai.ChatCompletionRequest) (string, error) {
	if err := m.slots.Acquire(ctx, 1); err != nil {
		return "", err
	}
	defer m.slots.Release(1)
	stream, err := m.api.CreateChatCompletionStream(ctx, req)
	if err != nil {
		return "", err
	}
	defer stream.Close()
	var answer strings.Builder
	for {
		raw, err := stream.RecvRaw()
		if errors.Is(err, io.EOF) {
			return answer.String(), nil
		}
		var c chunk
		if err == nil {
			err = json.Unmarshal(raw, &c)
		}
		if err != nil {
			return "", fmt.Errorf("read stream: %w", err)
		}
		for _, ch := range c.Choices {
			answer.WriteString(ch.Delta.Content)
		}
	}
}

// turn makes one mention's calls (see the package doc); a failure is logged.
func turn(ctx context.Context, api *slack.Client, model *modelClient, template openai.ChatCompletionRequest, team string, m *slackevents.AppMentionEvent) {
	thread := cmp.Or(m.ThreadTimeStamp, m.TimeStamp)
	if _, err := api.SetAgentSessionStatusContext(ctx, slack.AgentSessionSetStatusParameters{
		Status: "processing", ChannelID: m.Channel, ThreadTS: thread, Title: m.Text, InitiatorUserID: m.User}); err != nil {
		log.Printf("agents.sessions.setStatus: %v", err)
	}
	req := template
	req.Messages = append([]openai.ChatCompletionMessage(nil), template.Messages...)
	req.Messages[len(req.Messages)-1].Content = m.Text
	answer, err := model.complete(ctx, req)
	if err != nil {
		log.Printf("chat completion: %v", err)
		return
	}
	_, ts, err := api.StartStreamContext(ctx, m.Channel, slack.MsgOptionTS(thread),
		slack.MsgOptionRecipientUserID(m.User), slack.MsgOptionRecipientTeamID(team))
	if err != nil {
		log.Printf("chat.startStream: %v", err)
		return
	}
	if _, _, err := api.StopStreamContext(ctx, m.Channel, ts, slack.MsgOptionMarkdownText(answer)); err != nil {
		log.Printf("chat.stopStream: %v", err)
	}
}
