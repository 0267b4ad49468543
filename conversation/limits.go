package conversation

// Floods (README, "Limits and secrets"): Submit refuses a person's input, queuing nothing, when
//
//   - the person's token bucket in this process is empty (Config.UserRate and
//     UserBurst): one bucket for messages and commands, another for clicks,
//     clickFactor times as fast and as deep (a person driving a workflow clicks
//     quickly, and an out-of-date click costs no model call), so that a flood of
//     messages never leaves a person unable to click Stop, Approve or Keep;
//   - or, for a message or a command, its thread has MaxQueuedPerThread pending
//     inputs, or the person has MaxQueuedPerUser pending inputs across threads:
//     counted in the store (Store.CountPending), so that every replica agrees.
//
// Clicks are not held to the queue bounds: a thread full of messages must still take
// its Stop and workflow buttons, and a click that is out of date costs a look at the
// checkpoint, never a model call. A Stop click is never refused: it acts at once.
//
// While inputs are spooled (the store is unavailable), the queue bounds count the
// inputs this process spooled (the store's count is unknown then), and the buckets
// apply as always: a flood during an outage spools at most the bounds per thread and
// per person, plus what the buckets let through.
//
// The person refused gets one polite ephemeral notice saying when to try again, and
// no other for NoticeInterval: a flood does not become a flood of notices.

// User returns the Slack user id of the person behind in: the author of a message,
// the person who clicked or ran a command; "" for a pipeline's input.
func (in Input) User() string {
	switch {
	case in.Message != nil:
		return in.Message.UserID
	case in.Action != nil:
		return in.Action.UserID
	case in.Command != nil:
		return in.Command.UserID
	case in.Thread != nil:
		return in.Thread.UserID
	}
	return ""
}
