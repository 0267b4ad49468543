package emulator

import (
	"encoding/base64"
	"math"
	"slices"
	"strconv"
	"strings"
)

// conversationsAPI answers the methods that read the workspace:
// conversations.*, users.info, auth.test and api.test. Each runs with the
// lock held.
type conversationsAPI struct {
	ws *workspace
}

// methods is the conversations family of the Web API, with users.info,
// auth.test and api.test.
func (a *conversationsAPI) methods() map[string]method {
	return map[string]method{
		"api.test":              {handle: a.apiTest, readOnly: true},
		"auth.test":             {handle: a.authTest, readOnly: true},
		"conversations.replies": {handle: a.conversationsReplies, readOnly: true},
		"conversations.history": {handle: a.conversationsHistory, readOnly: true},
		"conversations.info":    {handle: a.conversationsInfo, readOnly: true},
		"conversations.open":    {handle: a.conversationsOpen},
		"users.info":            {handle: a.usersInfo, readOnly: true},
	}
}

// apiTest implements api.test: it echoes its arguments.
func (a *conversationsAPI) apiTest(r *request) (object, error) {
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
func (a *conversationsAPI) authTest(*request) (object, error) {
	return object{
		"url":                   "https://" + a.ws.cfg.TeamDomain + ".slack.com/",
		"team":                  a.ws.cfg.TeamName,
		"user":                  a.ws.cfg.BotName,
		"team_id":               a.ws.cfg.TeamID,
		"user_id":               a.ws.cfg.BotUserID,
		"bot_id":                a.ws.cfg.BotID,
		"is_enterprise_install": false,
	}, nil
}

// conversationsReplies implements conversations.replies
// (https://docs.slack.dev/reference/methods/conversations.replies): the
// thread's parent and replies, oldest first, filtered by oldest/latest/
// inclusive and paginated by limit and cursor, with metadata when
// include_all_metadata is true. ts may name the parent or any reply.
// Continuation pages do not repeat the parent.
func (a *conversationsAPI) conversationsReplies(r *request) (object, error) {
	ch, err := channelArg(a.ws, r.get("channel"))
	if err != nil {
		return nil, err
	}
	if err := r.require("ts"); err != nil {
		return nil, err
	}
	if ch.Outsider {
		return nil, errCode("not_in_channel")
	}
	root := ch.root(r.get("ts"))
	if root == nil {
		return nil, errCode("thread_not_found")
	}
	return a.pageLocked(ch, r, ch.thread(root.TS), 1000, false)
}

// conversationsHistory implements conversations.history
// (https://docs.slack.dev/reference/methods/conversations.history): the
// channel's top-level messages, newest first, with metadata when
// include_all_metadata is true.
func (a *conversationsAPI) conversationsHistory(r *request) (object, error) {
	ch, err := channelArg(a.ws, r.get("channel"))
	if err != nil {
		return nil, err
	}
	return a.pageLocked(ch, r, ch.thread(""), 100, true)
}

// pageLocked answers one page of msgs (sorted oldest first) as Slack's
// cursor pagination does (https://docs.slack.dev/apis/web-api/pagination):
// has_more and response_metadata.next_cursor, an opaque
// base64("next_ts:<ts>") naming the first message of the next page. Messages carry
// their metadata only when include_all_metadata is true, as in Slack.
func (a *conversationsAPI) pageLocked(ch *channelState, r *request, msgs []*record, defaultLimit int, newestFirst bool) (object, error) {
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
		w := a.ws.wireLocked(ch, m)
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
func (a *conversationsAPI) conversationsInfo(r *request) (object, error) {
	ch, ok := a.ws.channels[r.get("channel")]
	if !ok {
		return nil, errCode("channel_not_found")
	}
	return object{"channel": a.channelObject(ch.Channel)}, nil
}

// conversationsOpen implements conversations.open for a DM with one user.
func (a *conversationsAPI) conversationsOpen(r *request) (object, error) {
	if id := r.get("channel"); id != "" {
		ch, ok := a.ws.channels[id]
		if !ok {
			return nil, errCode("channel_not_found")
		}
		return object{"channel": object{"id": ch.ID}}, nil
	}
	users := strings.Split(r.get("users"), ",")
	if len(users) != 1 || users[0] == "" {
		return nil, errCode("invalid_arguments", "[ERROR] users must name exactly one user")
	}
	if _, ok := a.ws.users[users[0]]; !ok {
		return nil, errCode("user_not_found")
	}
	ch, already := a.ws.channelLocked(users[0])
	if !already {
		a.ws.addChannelLocked(Channel{ID: "D" + strings.TrimPrefix(users[0], "U"), Type: ChannelTypeIM, User: users[0]})
		ch = a.ws.channels["D"+strings.TrimPrefix(users[0], "U")]
	}
	return object{"no_op": already, "already_open": already, "channel": object{"id": ch.ID}}, nil
}

// channelObject renders a conversation as conversations.info does.
func (a *conversationsAPI) channelObject(ch Channel) object {
	o := object{
		"id":              ch.ID,
		"created":         1700000000,
		"is_archived":     false,
		"is_org_shared":   false,
		"context_team_id": a.ws.cfg.TeamID,
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
		o["is_member"] = !ch.Outsider
		o["topic"] = object{"value": "", "creator": "", "last_set": 0}
		o["purpose"] = object{"value": ch.Purpose, "creator": "", "last_set": 0}
	}
	return o
}

// usersInfo implements users.info.
func (a *conversationsAPI) usersInfo(r *request) (object, error) {
	u, ok := a.ws.users[r.get("user")]
	if !ok {
		return nil, errCode("user_not_found")
	}
	profile := object{
		"real_name":    u.RealName,
		"display_name": u.Name,
		"team":         a.ws.cfg.TeamID,
	}
	if u.IsBot {
		profile["bot_id"] = u.BotID
	}
	user := object{
		"id":        u.ID,
		"team_id":   a.ws.cfg.TeamID,
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
