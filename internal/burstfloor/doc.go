// Command burstfloor is the library floor of a turn: a program that makes, for each
// mention, the calls threadwright's turn makes through its libraries, with nothing of
// its own in between. Run as BenchmarkBurst's replica (its Floor case), it shows what
// a plain turn costs at the least with slack-go, go-openai and net/http on the
// machine, in the same spell as threadwright itself (docs/operations.md, "Numbers").
//
// For each envelope it reads over Socket Mode (SOCKET_CONNECTIONS connections,
// default 2, as threadwright opens) it sends the ack; for each app_mention it calls
// agents.sessions.setStatus (processing, titled with the text), a streamed chat
// completion with the request in FLOOR_REQUEST (a JSON chat completion request, its
// last message's content replaced by the mention's text; each tool's parameters sent
// as JSON encoded once, as the bot sends them), read to its end with RecvRaw and a
// small chunk type of its own, as the bot reads it, then chat.startStream in the
// mention's thread and chat.stopStream with the answer as markdown_text (the bot
// starts its stream as the answer's first text arrives, and sends the text with
// chat.stopStream: the same calls). Model calls in flight are bounded by
// MODEL_MAX_CONCURRENT (default 500, the bot's), on a transport set up as
// agents.NewClient sets up the bot's; the Slack client is httpclient.NewSlack's, as
// the bot's.
//
// What the bot does and the floor does not: store anything (the bot's store writes
// have a floor of their own, BenchmarkComparison), hold turns back while the intake
// is busy, check scope or limits, keep a log, metrics or traces, retry, redact;
// chat.startStream's task_display_mode; chat.stopStream's metadata tag and feedback
// buttons; the defusing of mentions in the answer; the watching dialer of its Socket
// Mode connections. So the floor is lower than any turn of the bot can be.
//
// It reads threadwright's SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_API_URL,
// OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL, writes its CPU profile to the
// file THREADWRIGHT_TEST_CPUPROFILE (profiling.CPUEnv) names when set
// (BenchmarkBurst's BURST_CPUPROFILE), and ends on SIGTERM or SIGINT once the turns
// under way have made their calls (each within 30 s); it exits with status 1 when it
// cannot start.
package main
