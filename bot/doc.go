// Package bot is threadwright's Slack adapter: it connects to Slack in Socket Mode with
// slack-go, acks every envelope at once, turns the events meant for the bot into
// conversation inputs, and implements conversation.Messenger on the Slack Web API.
//
// Event handling follows DESIGN.md ("Data flow of one Slack event", step 1):
//
//   - Every envelope is acked before any other work (Slack's deadline is 3 seconds); an
//     envelope slack-go cannot decode is acked too, using the envelope_id read from the
//     raw frame, and logged.
//   - An app_mention, a direct message (channel_type "im") and a reply in a thread the bot
//     is part of become a conversation.Input. The bot's own messages, other bots'
//     messages, message_changed / message_deleted and other subtypes, top-level channel
//     messages without a mention and the message event that duplicates an app_mention
//     are dropped.
//   - Inputs are handed to a Submitter (conversation.Service) by one dispatcher
//     goroutine, so the socket reader never waits for the database.
//
// Messenger posts replies in the thread (split to fit Slack's message limits), shows
// "is thinking…" with assistant.threads.setStatus (falling back to a reaction where that
// method is refused) and reads earlier thread messages with conversations.replies.
package bot
