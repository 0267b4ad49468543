// Package api is threadwright's HTTP API (docs/api.md, "HTTP API"): other systems list
// workflows, start runs, read their artifacts and reports, act on artifacts (pick,
// approve, request changes, edit, restart, keep, regenerate), cancel runs, read a
// thread's stored messages and manage the knowledge base.
//
// It is built with huma v2 on net/http: the OpenAPI 3.1 document (GET
// /openapi.json, committed as docs/openapi.json) is generated from the Go types the
// handlers take and return, so it cannot drift from them, and errors are RFC 9457
// problem details (application/problem+json).
//
// Writes do not go around the conversation service: starting a run, acting on an
// artifact and cancelling a run submit a durable input (conversation.Input) to the
// thread, the very command or click (or modal submission) Slack's would be, so they run in the thread's order on whichever
// replica holds it, through the same workflow machine and permission rules
// (workflow.Machine.May). A request is authenticated by a bearer token of
// API_TOKENS; the token's name, as "api:<name>", is the actor of what it does.
//
//go:generate go test -run TestOpenAPISpec . -update
package api
