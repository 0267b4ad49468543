package emulator

import (
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The conversations.*, users.*, reactions.*, assistant.* and auth.* methods.
// Each runs with s.mu held.

// apiTest implements api.test: it echoes its arguments.
func (s *Server) apiTest(r *request) (object, error) {
	if e := r.get("error"); e != "" {
		return nil, errCode(e)
	}
	args := object{}
	for k := range r.params {
		args[k] = r.get(k)
	}
	return object{"args": args}, nil
}

// authTest implements auth.test (https://docs.slack.dev/reference/methods/auth.test)
// for the bot token.
func (s *Server) authTest(*request) (object, error) {
	return object{
		"url":                   "https://" + s.cfg.TeamDomain + ".slack.com/",
		"team":                  s.cfg.TeamName,
		"user":                  s.cfg.BotName,
		"team_id":               s.cfg.TeamID,
		"user_id":               s.cfg.BotUserID,
		"bot_id":                s.cfg.BotID,
		"is_enterprise_install": false,
	}, nil
}

// conversationsReplies implements conversations.replies
// (https://docs.slack.dev/reference/methods/conversations.replies): the
// thread's parent and replies, oldest first, filtered by oldest/latest/
// inclusive and paginated by limit and cursor, with metadata when
// include_all_metadata is true. ts may name the parent or any reply.
// Continuation pages do not repeat the parent.
func (s *Server) conversationsReplies(r *request) (object, error) {
	ch, err := channelArg(s.workspace, r.get("channel"))
	if err != nil {
		return nil, err
	}
	if err := r.require("ts"); err != nil {
		return nil, err
	}
	root := ch.root(r.get("ts"))
	if root == nil {
		return nil, errCode("thread_not_found")
	}
	return s.pageLocked(ch, r, ch.thread(root.TS), 1000, false)
}

// conversationsHistory implements conversations.history
// (https://docs.slack.dev/reference/methods/conversations.history): the
// channel's top-level messages, newest first, with metadata when
// include_all_metadata is true.
func (s *Server) conversationsHistory(r *request) (object, error) {
	ch, err := channelArg(s.workspace, r.get("channel"))
	if err != nil {
		return nil, err
	}
	return s.pageLocked(ch, r, ch.thread(""), 100, true)
}

// pageLocked answers one page of msgs (sorted oldest first) as Slack's
// cursor pagination does (https://docs.slack.dev/apis/web-api/pagination):
// has_more and response_metadata.next_cursor, an opaque
// base64("next_ts:<ts>") naming the first message of the next page. Messages carry
// their metadata only when include_all_metadata is true, as in Slack.
func (s *Server) pageLocked(ch *channelState, r *request, msgs []*record, defaultLimit int, newestFirst bool) (object, error) {
	limit := defaultLimit
	if v := r.get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return nil, errCode("invalid_limit")
		}
		if n > 0 {
			limit = min(n, 1000)
		}
	}
	oldest, latest := int64(0), int64(math.MaxInt64)
	if v := r.get("oldest"); v != "" {
		oldest = parseTSArg(v)
	}
	if v := r.get("latest"); v != "" {
		latest = parseTSArg(v)
	}
	inclusive := r.bool("inclusive")

	var selected []*record
	for _, m := range msgs {
		t, _ := tsMicros(m.TS)
		if (t > oldest || inclusive && t == oldest) && (t < latest || inclusive && t == latest) {
			selected = append(selected, m)
		}
	}
	if newestFirst {
		for i, j := 0, len(selected)-1; i < j; i, j = i+1, j-1 {
			selected[i], selected[j] = selected[j], selected[i]
		}
	}

	start := 0
	if cursor := r.get("cursor"); cursor != "" {
		next, ok := decodeCursor(cursor)
		if !ok {
			return nil, errCode("invalid_cursor")
		}
		// The page starts at the cursor's message, or where it was.
		start = slices.IndexFunc(selected, func(m *record) bool {
			t, _ := tsMicros(m.TS)
			return newestFirst && t <= next || !newestFirst && t >= next
		})
		if start < 0 {
			start = len(selected)
		}
	}
	end := min(start+limit, len(selected))
	out := make([]wireMessage, 0, end-start)
	withMetadata := r.bool("include_all_metadata")
	for _, m := range selected[start:end] {
		w := s.wireLocked(ch, m)
		if !withMetadata {
			w.Metadata = nil
		}
		out = append(out, w)
	}
	resp := object{"messages": out, "has_more": end < len(selected)}
	if end < len(selected) {
		resp["response_metadata"] = object{"next_cursor": encodeCursor(selected[end].TS)}
	}
	return resp, nil
}

// parseTSArg reads an oldest/latest argument: a Slack timestamp or Unix
// seconds, as microseconds.
func parseTSArg(v string) int64 {
	if t, ok := tsMicros(v); ok {
		return t
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0
	}
	return int64(f * 1e6)
}

func encodeCursor(ts string) string {
	return base64.StdEncoding.EncodeToString([]byte("next_ts:" + strings.ReplaceAll(ts, ".", "")))
}

// decodeCursor returns the microseconds timestamp a cursor names.
func decodeCursor(cursor string) (int64, bool) {
	b, err := base64.StdEncoding.DecodeString(cursor)
	if err != nil {
		return 0, false
	}
	digits, ok := strings.CutPrefix(string(b), "next_ts:")
	if !ok {
		return 0, false
	}
	micros, err := strconv.ParseInt(digits, 10, 64)
	return micros, err == nil
}

// conversationsInfo implements conversations.info.
func (s *Server) conversationsInfo(r *request) (object, error) {
	ch, ok := s.channels[r.get("channel")]
	if !ok {
		return nil, errCode("channel_not_found")
	}
	return object{"channel": s.channelObject(ch.Channel)}, nil
}

// conversationsOpen implements conversations.open for a DM with one user.
func (s *Server) conversationsOpen(r *request) (object, error) {
	if id := r.get("channel"); id != "" {
		ch, ok := s.channels[id]
		if !ok {
			return nil, errCode("channel_not_found")
		}
		return object{"channel": object{"id": ch.ID}}, nil
	}
	users := strings.Split(r.get("users"), ",")
	if len(users) != 1 || users[0] == "" {
		return nil, errCode("invalid_arguments", "[ERROR] users must name exactly one user")
	}
	if _, ok := s.users[users[0]]; !ok {
		return nil, errCode("user_not_found")
	}
	ch, already := s.channelLocked(users[0])
	if !already {
		s.addChannelLocked(Channel{ID: "D" + strings.TrimPrefix(users[0], "U"), Type: ChannelTypeIM, User: users[0]})
		ch = s.channels["D"+strings.TrimPrefix(users[0], "U")]
	}
	return object{"no_op": already, "already_open": already, "channel": object{"id": ch.ID}}, nil
}

// channelObject renders a conversation as conversations.info does.
func (s *Server) channelObject(ch Channel) object {
	o := object{
		"id":              ch.ID,
		"created":         1700000000,
		"is_archived":     false,
		"is_org_shared":   false,
		"context_team_id": s.cfg.TeamID,
	}
	switch ch.Type {
	case ChannelTypeIM:
		o["is_im"] = true
		o["user"] = ch.User
		o["is_user_deleted"] = false
	default:
		private := ch.Type == ChannelTypeGroup
		o["name"] = ch.Name
		o["name_normalized"] = ch.Name
		o["is_channel"] = !private
		o["is_group"] = private
		o["is_private"] = private
		o["is_im"] = false
		o["is_mpim"] = false
		o["is_general"] = ch.Name == "general"
		o["is_member"] = true
		o["topic"] = object{"value": "", "creator": "", "last_set": 0}
		o["purpose"] = object{"value": "", "creator": "", "last_set": 0}
	}
	return o
}

// usersInfo implements users.info.
func (s *Server) usersInfo(r *request) (object, error) {
	u, ok := s.users[r.get("user")]
	if !ok {
		return nil, errCode("user_not_found")
	}
	profile := object{
		"real_name":    u.RealName,
		"display_name": u.Name,
		"team":         s.cfg.TeamID,
	}
	if u.IsBot {
		profile["bot_id"] = u.BotID
	}
	user := object{
		"id":        u.ID,
		"team_id":   s.cfg.TeamID,
		"name":      u.Name,
		"real_name": u.RealName,
		"deleted":   false,
		"is_bot":    u.IsBot,
		"is_admin":  false,
		"tz":        "UTC",
		"tz_label":  "Coordinated Universal Time",
		"tz_offset": 0,
		"profile":   profile,
	}
	if r.bool("include_locale") {
		user["locale"] = u.Locale
		if u.Locale == "" {
			user["locale"] = "en-US"
		}
	}
	return object{"user": user}, nil
}

// reactionTarget finds the message of a reactions.* call.
func (s *Server) reactionTarget(r *request) (*channelState, *record, string, error) {
	ch, err := channelArg(s.workspace, r.get("channel"))
	if err != nil {
		return nil, nil, "", err
	}
	if r.get("timestamp") == "" {
		return nil, nil, "", errCode("no_item_specified")
	}
	m := ch.find(r.get("timestamp"))
	if m == nil {
		return nil, nil, "", errCode("message_not_found")
	}
	name := strings.Trim(r.get("name"), ":")
	if name == "" {
		return nil, nil, "", errCode("invalid_name")
	}
	return ch, m, name, nil
}

// reactionsAdd implements reactions.add for the bot user.
func (s *Server) reactionsAdd(r *request) (object, error) {
	ch, m, name, err := s.reactionTarget(r)
	if err != nil {
		return nil, err
	}
	for _, re := range m.Reactions {
		if re.Name == name && slices.Contains(re.Users, s.cfg.BotUserID) {
			return nil, errCode("already_reacted")
		}
	}
	s.changeLocked(ch, m, func(m *record) {
		for i := range m.Reactions {
			if m.Reactions[i].Name == name {
				m.Reactions[i].Users = append(m.Reactions[i].Users, s.cfg.BotUserID)
				return
			}
		}
		m.Reactions = append(m.Reactions, Reaction{Name: name, Users: []string{s.cfg.BotUserID}})
	})
	return nil, nil
}

// reactionsRemove implements reactions.remove for the bot user.
func (s *Server) reactionsRemove(r *request) (object, error) {
	ch, m, name, err := s.reactionTarget(r)
	if err != nil {
		return nil, err
	}
	found := false
	for _, re := range m.Reactions {
		found = found || re.Name == name && slices.Contains(re.Users, s.cfg.BotUserID)
	}
	if !found {
		return nil, errCode("no_reaction")
	}
	s.changeLocked(ch, m, func(m *record) {
		var kept []Reaction
		for _, re := range m.Reactions {
			if re.Name == name {
				var users []string
				for _, u := range re.Users {
					if u != s.cfg.BotUserID {
						users = append(users, u)
					}
				}
				re.Users = users
			}
			if len(re.Users) > 0 {
				kept = append(kept, re)
			}
		}
		m.Reactions = kept
	})
	return nil, nil
}

// assistantThreadsSetStatus implements assistant.threads.setStatus
// (https://docs.slack.dev/reference/methods/assistant.threads.setStatus):
// channel_id and thread_ts are required; an empty status clears it.
func (s *Server) assistantThreadsSetStatus(r *request) (object, error) {
	if err := r.require("channel_id", "thread_ts"); err != nil {
		return nil, err
	}
	ch, err := channelArg(s.workspace, r.get("channel_id"))
	if err != nil {
		return nil, err
	}
	threadTS := r.get("thread_ts")
	if ch.find(threadTS) == nil {
		return nil, errCode("invalid_thread_ts")
	}
	s.setStatusLocked(threadKey{ch.ID, threadTS}, r.get("status"))
	return nil, nil
}
