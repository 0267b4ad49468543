// Package bot is threadwright's Slack adapter: it connects to Slack in Socket Mode with
// slack-go, turns the events and interactions meant for the bot into conversation
// inputs and acks each envelope once its input is stored, renders conversation cards
// as Block Kit, and implements conversation.Messenger on the Slack Web API.
//
// Event handling follows docs/architecture.md ("Data flow of one Slack event", step 1,
// and "Accepted means stored"):
//
//   - Envelopes are handled one at a time, in the order they arrive, so a thread's
//     inputs are submitted in order. The input an envelope carries is handed to a
//     Submitter (conversation.Service), which stores it, within Config.AckBudget
//     (2.5 s by default; Slack's deadline is 3 s); only then is the envelope acked.
//   - An Events API envelope whose input could not be stored is not acked: Slack
//     delivers it again with retry_attempt+1, to this or another replica. An
//     interaction or slash command is acked anyway (Slack never delivers those again)
//     and the person is told ephemerally.
//   - Envelopes not for the bot are acked and dropped; an envelope slack-go cannot
//     decode is acked too, using the envelope_id read from the raw frame, and logged.
//   - An app_mention, a direct message (channel_type "im") and a reply in a thread the bot
//     is part of become a conversation.Input. The bot's own messages, other bots'
//     messages, message_changed / message_deleted and other subtypes, top-level channel
//     messages without a mention and the message event that duplicates an app_mention
//     are dropped.
//   - A lost connection and the reconnection (with how long it was down) are logged at
//     warn; slack-go reconnects by itself.
//
// Interactivity (docs/architecture.md, "Workflow machine" and "Commands"):
//
//   - A click on a button or a menu option of the bot's messages (block_actions; the
//     action_id starts with "tw:") carries a conversation.Action in its value
//     (RenderCard). It becomes a KindAction input, deduplicated by trigger_id
//     (conversation.InteractionInputID). When the value also carries a
//     conversation.Modal, the bot instead opens the modal at once with views.open, in
//     its own goroutine (the trigger_id is valid for 3 seconds), and the modal's
//     submission (view_submission, callback_id ModalCallbackID, the Action in
//     private_metadata) becomes the KindAction input, with the text typed.
//   - A slash command becomes a KindCommand input whose Key has no ThreadTS; the
//     message shortcut ShortcutCallbackID one for the thread of the message it was
//     used on. Text commands by @mention stay user messages.
//   - Payloads that cannot be read, and interactions with other apps' elements or
//     callbacks, are acked, logged and dropped. A person whose click or command could
//     not be submitted, or whose modal could not be opened, is told ephemerally.
//
// Messenger posts replies in the thread (split to fit Slack's message limits), shows
// "is thinking…" with assistant.threads.setStatus (falling back to a reaction where that
// method is refused), reads earlier thread messages with conversations.replies, posts
// and updates cards (RenderCard: a card too long for one message continues in several),
// posts ephemeral messages, uploads files (files upload v2) and reads users' locales.
//
// Every message a turn posts is tagged (conversation.Tag) with Slack message metadata
// of event_type TurnEventType, whose event_payload names the input and the post:
// {"input_id", "n", "piece", "of", "answer", "final"}. A re-run of the turn finds its
// messages with Messenger.Posted (conversations.replies or conversations.history with
// include_all_metadata) and passes them back in Tag.Replace, so that they are edited
// (chat.update) or deleted (chat.delete) instead of posted again: one answer per
// input, across crashes and replicas.
package bot
