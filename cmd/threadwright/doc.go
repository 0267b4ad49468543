// Command threadwright runs the threadwright Slack bot: LLM agents inside Slack
// threads, every thread a durable, checkpointed conversation.
//
// Usage:
//
//	threadwright [run]     run the bot (Socket Mode; configuration from the environment)
//	threadwright migrate   apply the store's migrations and exit
//	threadwright manifest  print the Slack app manifest (YAML)
//	threadwright version   print the version
//	threadwright help      print this help and the configuration variables
//
// Main wires the packages together (docs/architecture.md, "Packages"): store (the
// checkpoint store), agents (the model client, tools and the assistant pipeline),
// conversation (the turn service), bot (Slack), metrics, api and webhook. It holds
// the subsystems as fields: Main.Run builds them from the configuration, one builder
// each (runConfig's methods: openSlack, buildTools, newAgents, newService…), runs
// them, and tears them down in reverse when its context ends, so that end-to-end
// tests run the real program in-process.
package main
