package api

import (
	"context"
	"net/http"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/threadwright/threadwright/conversation"
)

// Message is a stored message of a thread's conversation.
type Message struct {
	Seq       int64     `json:"seq" doc:"Its position in the conversation, from 1."`
	Role      string    `json:"role" enum:"user,assistant,context,revision" doc:"user: a person's request; assistant: the bot's reply; context: a message of the thread from before the bot joined; revision: an artifact revision (its text)."`
	UserID    string    `json:"user_id,omitempty"`
	Text      string    `json:"text"`
	SlackTS   string    `json:"slack_ts,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

type messagesInput struct {
	Team     string `path:"team"`
	Channel  string `path:"channel"`
	ThreadTS string `path:"thread_ts"`
	Limit    int    `query:"limit" minimum:"1" maximum:"200" default:"50"`
	Before   int64  `query:"before" minimum:"0" doc:"Only messages with a seq below this (0: up to the newest); use next_before to page back."`
}

type messagesOutput struct {
	Body struct {
		Messages   []Message `json:"messages" doc:"Oldest first."`
		NextBefore int64     `json:"next_before,omitempty" doc:"Pass as before for the older page; absent on the oldest page."`
	}
}

func (s *Server) registerMessages() {
	huma.Register(s.api, secured(huma.Operation{
		OperationID: "list-messages", Method: http.MethodGet, Path: "/v1/conversations/{team}/{channel}/{thread_ts}/messages",
		Tags: []string{"conversations"}, Summary: "List a thread's stored messages, newest page first",
		Errors: []int{http.StatusUnauthorized, http.StatusNotFound, http.StatusUnprocessableEntity},
	}, ScopeConversationsRead), func(ctx context.Context, in *messagesInput) (*messagesOutput, error) {
		if err := mayChannel(ctx, in.Channel); err != nil {
			return nil, err
		}
		key := conversation.Key{TeamID: in.Team, ChannelID: in.Channel, ThreadTS: in.ThreadTS}
		msgs, err := s.cfg.Store.Messages(ctx, key, in.Before, in.Limit, "")
		if err != nil {
			return nil, s.storeError(err, "conversation "+key.String())
		}
		out := &messagesOutput{}
		out.Body.Messages = []Message{}
		for _, m := range msgs {
			out.Body.Messages = append(out.Body.Messages, Message{Seq: m.Seq, Role: string(m.Role), UserID: m.UserID, Text: m.Text, SlackTS: m.SlackTS, CreatedAt: m.CreatedAt})
		}
		if len(msgs) == in.Limit && msgs[0].Seq > 1 {
			out.Body.NextBefore = msgs[0].Seq
		}
		return out, nil
	})
}
