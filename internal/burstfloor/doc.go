// Command burstfloor is the library floor of a turn: a program that makes, for each
// mention, only the calls threadwright's turn makes through its libraries, with
// nothing of its own in between. Run as BenchmarkBurst's replica (BURST_BINARY), it
// shows what a turn costs at the least with slack-go, go-openai and net/http on the
// machine, in the same spell as threadwright itself (docs/operations.md, "Numbers").
//
// For each envelope it reads over Socket Mode (SOCKET_CONNECTIONS connections,
// default 2, as threadwright opens) it sends the ack; for each app_mention it calls
// agents.sessions.setStatus (processing, titled with the text), a streamed chat
// completion with the request in FLOOR_REQUEST (a JSON chat completion request, its
// last message's content replaced by the mention's text), read to its end, then
// chat.startStream in the mention's thread and chat.stopStream with the answer as
// markdown_text, as a turn does once its answer's text is there. It stores nothing:
// threadwright's store writes have a floor of their own (BenchmarkComparison). It
// reads threadwright's SLACK_BOT_TOKEN, SLACK_APP_TOKEN, SLACK_API_URL,
// OPENAI_API_KEY, OPENAI_BASE_URL and OPENAI_MODEL, writes its CPU profile to
// THREADWRIGHT_TEST_CPUPROFILE when set (BenchmarkBurst's BURST_CPUPROFILE), and ends
// on SIGTERM or SIGINT, once the turns under way have made their calls.
package main
