// Package emulator is a local Slack workspace that speaks Slack's wire
// protocol, so the real slack-go client and its socketmode package run
// against it unchanged. End-to-end tests and the dev playground use it in
// place of slack.com.
//
// # Use
//
// NewServer starts it on a free 127.0.0.1 port, like httptest.NewServer;
// Close stops it. Point slack-go at it and run the bot as in production:
//
//	emu, err := emulator.NewServer(emulator.Config{})
//	...
//	defer emu.Close()
//	cfg := emu.Config()
//	api := slack.New(cfg.BotToken,
//		slack.OptionAPIURL(emu.URL()), // "http://127.0.0.1:port/api/"
//		slack.OptionAppLevelToken(cfg.AppToken))
//	client := socketmode.New(api)
//	go client.RunContext(ctx)
//
// A test then acts as the people in the workspace (PostUserMessage,
// EditUserMessage, ClickButton, ClickButtonByLabel, ChooseMenuItem,
// SlashCommand, MessageShortcut, SubmitView, SubmitModal, SubmitInputs), waits for the
// bot (WaitForMessages, WaitForAcks, WaitForConnections, WaitForView,
// WaitFor) and inspects what it did (Thread, BotMessages, Ephemerals,
// Status, StatusHistory, Buttons, Files, Views, Calls, Acks, Envelopes). FailNext,
// RateLimitNext, SetLatency, Redeliver, SendEnvelope, SendRaw, Disconnect and
// CloseConnections inject the failures a production bot meets. Subscribe
// streams every change, for a live view.
//
// The default workspace (DefaultConfig) is team T0TEAM with the bot U0BOT
// (bot ID B0BOT, app A0APP, tokens "xoxb-emulator" and "xapp-emulator"),
// people alice (U0ALICE) and bob (U0BOB), a second bot otherbot (U0OTHERBOT,
// B0OTHER), channels #general (C0GENERAL) and #random (C0RANDOM), and an IM
// between alice and the bot (D0ALICE).
//
// # Playground
//
// The same server serves a Slack-like web page at PageURL ("/"), so a person
// can use the bot with no Slack workspace: a channel list (the channels and
// the acting user's DM with the bot), messages with threads, a composer with
// @mentions and the app's slash commands (Config.Commands), the bot's Block
// Kit (buttons with confirm dialogs, overflow and static select menus),
// modals, ephemeral messages, message shortcuts (Config.Shortcuts), file
// downloads, the assistant status and streamed messages, updated live.
// A user picker (?user=U0BOB) lets several tabs act as different people;
// Config.Banner and Config.Title label the page. The page is plain HTML, CSS
// and JavaScript embedded in the binary (web/); app.js lists the DOM
// contract browser tests rely on. Its JSON endpoints under /ui/ (state,
// events as server-sent events, post, click, choose, submit, close,
// shortcut, files) act through the same code as the methods above;
// playground.go documents them, playground_state.go and web.go answer them.
//
// # Browsers
//
// Every web page the developer opens can send requests to the emulator's
// port. Every emulator refuses a Host header other than its own address or
// localhost (421, against DNS rebinding) and a POST or WebSocket upgrade from
// another origin (403). Config.Hardened, which `threadwright dev` sets, adds
// random tokens per run, tokens only from the Authorization header, no GET for
// Web API methods that write, and a session cookie for /ui/. guard.go has the
// checks, playground.go the session cookie.
//
// # Protocol facts it follows
//
// Web API (https://docs.slack.dev/apis/web-api/): methods answer at
// <base>/api/<method> to GET query strings and to POSTs of
// application/x-www-form-urlencoded, multipart/form-data or application/json
// bodies; the token comes from "Authorization: Bearer" or the token argument
// (the header only when Hardened).
// Every answer is HTTP 200 with {"ok": true, ...} or {"ok": false, "error":
// code} (not_authed without a token, invalid_auth with a wrong one,
// not_allowed_token_type with the other kind, unknown_method), except an
// injected rate limit: HTTP 429 with Retry-After in seconds
// (https://docs.slack.dev/apis/web-api/rate-limits). Arguments Slack requires
// answer invalid_arguments with response_metadata.messages. Pagination is by
// cursor: response_metadata.next_cursor and has_more
// (https://docs.slack.dev/apis/web-api/pagination).
//
// Methods: api.test, auth.test, apps.connections.open (app-level token
// only), chat.postMessage, chat.update, chat.delete, chat.postEphemeral,
// chat.getPermalink, chat.startStream, chat.appendStream, chat.stopStream,
// conversations.replies, conversations.history, conversations.info,
// conversations.open, users.info, reactions.add, reactions.remove,
// assistant.threads.setStatus, assistant.threads.setSuggestedPrompts,
// assistant.threads.setTitle, files.getUploadURLExternal (plus the upload
// URL), files.completeUploadExternal, views.open, views.push, views.update.
//
// Assistant view (assistant.go): StartAssistantThread opens a person's
// assistant thread beside a channel (assistant_thread_started),
// ChangeAssistantContext moves them (assistant_thread_context_changed), and
// AssistantThread reads the title and suggested prompts the app set; the
// prompts are checked as Slack documents them (one to four, each with a
// title and a message), and a title is required.
//
// Limits (chat.postMessage, Block Kit reference): text over MaxTextLength
// (40,000) characters is msg_too_long, and so is text over StrictTextLength
// (4,000) unless Config.LenientTextLimit is set, so a bot's splitting is
// exercised; chat.update's text over MaxUpdateTextLength (4,000) always; more than MaxBlocks (50) blocks, a section text over 3,000
// characters, more than 10 section fields, a header over 150, a button text
// over 75, an action_id over 255 or a button value over 2,000 characters,
// an overflow menu with more than 5 options (a static select more than 100),
// an option text over 75 or value over 150 characters, or a confirm dialog
// over its limits (title 100, text 300, buttons 30) is invalid_blocks, with
// Slack's json-pointer explanations in "errors". views.open answers
// invalid_arguments for a modal whose title, submit or close text is over
// 24 characters, with more than 100 blocks, private_metadata over 3,000
// characters, an input label over 2,000, a placeholder over 150 or a text
// input value over 3,000 (or its max_length). users.info with
// include_locale answers each user's User.Locale ("en-US" by default).
// Streaming: in channels (not IMs) chat.startStream needs recipient_user_id
// (else missing_recipient_user_id) and recipient_team_id (else
// missing_recipient_team_id); markdown_text is limited to 12,000 characters
// per call; appending to a stopped stream is message_not_in_streaming_state.
// An assistant thread status clears when the bot replies in the thread or
// after two minutes. Message metadata
// (https://docs.slack.dev/messaging/message-metadata), given to
// chat.postMessage, chat.update or chat.stopStream (chat.startStream takes
// none), must be an object with event_type and an event_payload object, else
// invalid_metadata_format; conversations.replies and conversations.history
// return it only with include_all_metadata=true. The bot's chat.delete removes
// its message from both.
//
// Events API (https://docs.slack.dev/apis/events-api/): every new message
// in any channel, the bot's own included, is delivered as an event_callback
// with a message event; messages the bot posts carry its user ID and bot_id
// (and app_id, bot_profile), messages of other bots have subtype bot_message,
// replies carry thread_ts and parent_user_id, reply_broadcast replies have
// subtype thread_broadcast, messages typed by people carry client_msg_id and
// rich_text blocks. A mention of the bot (<@U0BOT>) outside an IM also
// delivers an app_mention event with its own event_id and the same ts (and the
// message's files, as Slack's app_mention payloads carry them). Edits
// deliver message_changed (message and previous_message), deletions
// message_deleted. The payloads are shaped like Slack's published samples
// (shared/fixtures/slack/events), which the tests check field by field.
//
// Socket Mode (https://docs.slack.dev/apis/events-api/using-socket-mode/):
// apps.connections.open answers a single-use ws:// URL; on connect the
// server sends {"type":"hello","num_connections",...,"debug_info",
// "connection_info":{"app_id"}} and then WebSocket pings every PingInterval
// (10 s; slack-go reconnects after 30 s without one). Envelopes
// {"envelope_id","type","payload","accepts_response_payload",
// "retry_attempt","retry_reason"} of type events_api, interactive or
// slash_commands go to exactly one of the open connections (round-robin, at
// most MaxConnections, 10, as Slack allows per app) and wait when none is
// open. The bot acks with {"envelope_id", "payload"?}; the emulator records
// each ack with its latency from the write of the envelope. An envelope not
// acked within AckTimeout (3 s, Slack's deadline) is delivered again, to any
// connection, with retry_attempt+1 and retry_reason "timeout", up to
// MaxRetries (3) times. Disconnect sends {"type":"disconnect","reason":
// "refresh_requested"} and closes the connection; slack-go then reconnects.
//
// Interactivity (https://docs.slack.dev/interactivity/handling-user-interaction):
// buttons (in actions blocks and section accessories), overflow menus and
// static selects of visible and ephemeral messages can be used; a menu
// choice carries selected_option (and a static select's state in
// state.values). block_actions, message_action and view_submission payloads carry a
// trigger_id (valid once, for three seconds, for views.open) and a
// response_url on the emulator that replaces or deletes the original
// message or posts an ephemeral or in_channel answer. A slash command's ack
// payload is shown like a response_url answer. A view_submission's ack decides what
// the modal does (response_action update, push, errors, or it closes); the messages
// of "errors" that name input blocks are kept as View.Errors, and SubmitInputs, like
// Slack's client, does not submit a required input left empty.
//
// # Inside
//
// Each job has its own type, and Server embeds them, so their methods are
// Server's. From the bottom up: the configuration (config.go), messages and
// their wire form (message.go), Block Kit as read from the bot (blockkit.go);
// the workspace's state behind its one lock, with the change feed
// (workspace.go, threads.go); the Web API's dispatch (webapi.go) and Slack's
// limits (limits.go); the Events API (events.go) over the Socket Mode hub
// (envelope.go, socket.go); one handler type per family of Web API methods
// (chat.go, stream.go, conversations.go, files.go, assistant.go, views.go);
// interaction payloads (interactivity.go) and the people who act
// (people.go, actions.go); the playground (playground.go,
// playground_state.go, web.go); and server.go, which builds and routes them.
//
// What it does not emulate: OAuth and scopes, channel membership, message
// formatting and unfurling, rich text parsing beyond user mentions, the
// rendering of streaming task cards, and rate limits other than injected ones.
package emulator
