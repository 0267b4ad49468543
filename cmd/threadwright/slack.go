package main

import (
	"context"
	"fmt"
	"time"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/bot"
	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/assistant"
	"github.com/threadwright/threadwright/conversation/service"
	"github.com/threadwright/threadwright/internal/httpclient"
	"github.com/threadwright/threadwright/internal/tracing"
	"github.com/threadwright/threadwright/metrics"
)

// slackConn is the run's side of Slack's Web API: the client, the bot's identity,
// the signer of its buttons, and the Messengers that post as the bot.
type slackConn struct {
	api    *slack.Client
	me     bot.Identity
	signer *bot.Signer
	// raw posts as the bot; messenger signs the actions of the cards it posts
	// (docs/workflows.md, "Buttons are signed").
	raw       *bot.Messenger
	messenger *bot.SigningMessenger
	// agent reads what a person views and sets agent sessions (AGENT_SURFACE=agent).
	agent *bot.Agent
}

// openSlack reads the signer of the buttons from st, makes the Slack Web API client
// (counted by mx, traced, retrying rate limits: slack-go's default handler, which
// waits for Retry-After; a server error is not retried here, as a post may have
// landed, and the turn's outbox decides) and authenticates
// the bot with it (auth.test).
func (rc *runConfig) openSlack(ctx context.Context, st conversation.Store, mx *metrics.Metrics) (slackConn, error) {
	signer, err := actionSigner(ctx, st)
	if err != nil {
		return slackConn{}, err
	}
	api := slack.New(rc.SlackBotToken,
		// Before OptionRetryConfig, which wraps the client set so far.
		slack.OptionHTTPClient(tracing.SlackClient(mx.SlackClient(httpclient.NewSlack()))),
		slack.OptionAppLevelToken(rc.SlackAppToken),
		slack.OptionAPIURL(rc.SlackAPIURL),
		slack.OptionRetryConfig(slack.RetryConfig{
			MaxRetries: 3, RetryAfterDuration: 5 * time.Second, RetryAfterJitter: 500 * time.Millisecond,
			BackoffInitial: 200 * time.Millisecond, BackoffMax: 5 * time.Second, BackoffJitter: 100 * time.Millisecond,
		}),
	)
	me, err := bot.Authenticate(ctx, api)
	if err != nil {
		return slackConn{}, fmt.Errorf("slack: %w (check SLACK_BOT_TOKEN and SLACK_API_URL)", err)
	}
	rc.log.Info("authenticated with Slack", "team", me.TeamName, "team_id", me.TeamID, "bot_user", me.UserName, "bot_user_id", me.UserID)
	agent := bot.NewAgent(api, rc.log)
	raw := bot.NewMessenger(api, me, rc.log, bot.WithMaxReplyMessages(rc.MaxReplyMessages), bot.WithStreamRotation(rc.StreamRotation, nil), bot.WithSessions(agent))
	return slackConn{api: api, me: me, signer: signer, raw: raw, messenger: bot.NewSigningMessenger(raw, signer), agent: agent}, nil
}

// actionSigner returns the Signer of button values, keyed by the installation's
// secret bot.SigningKeyName, which the store makes once and every replica shares
// (docs/workflows.md, "Buttons are signed").
func actionSigner(ctx context.Context, st conversation.Store) (*bot.Signer, error) {
	secrets, ok := st.(interface {
		Secret(ctx context.Context, name string) ([]byte, error)
	})
	if !ok {
		return nil, fmt.Errorf("store %T keeps no secrets", st)
	}
	key, err := secrets.Secret(ctx, bot.SigningKeyName)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	return bot.NewSigner(key)
}

// newBot returns the Slack bot (Socket Mode) that submits what it reads to svc,
// recording the feedback on answers in st when st keeps it.
func (rc *runConfig) newBot(sc slackConn, svc *service.Service, st conversation.Store, mx *metrics.Metrics) (*bot.Bot, error) {
	var feedback bot.FeedbackRecorder
	if fs, ok := st.(conversation.FeedbackStore); ok {
		feedback = assistant.FeedbackLog{Store: fs}
	}
	return bot.New(bot.Config{API: sc.api, Identity: sc.me, Submitter: svc, Logger: rc.log, Signer: sc.signer, Feedback: feedback, Metrics: mx,
		Connections: rc.SocketConnections})
}
