// Package web holds threadwright's web tools, the tools the model uses to read the
// web (docs/tools.md, "Tools"): fetch_url (FetchURLTool) reads a page as text, web_search
// (SearchTool) searches through a SearXNG instance. They are ordinary tools of
// package agents' Registry, in the category "Web", and their output is untrusted
// (docs/tools.md, "Tool policy").
//
// Because the model chooses what fetch_url reads, every connection passes an address
// guard (guard.go): loopback, private, link-local and other special-purpose
// addresses are refused when they are dialled, unless the configuration allows them
// (FetchConfig.AllowPrivate, AllowHosts). GuardedClient gives the same guard to other
// requests whose URL configuration chose (webhook deliveries, package webhook), and
// SourceFetcher gives the same fetch to a workflow's fetch artifacts (docs/workflows.md,
// "Pipelines").
//
// A fetched body is read within FetchConfig's bounds (bytes, time, redirects),
// decoded from its character set to UTF-8 and, for HTML, converted to Markdown-like
// text, both by package internal/htmltext (Decode, Convert). The files people attach
// are downloaded by a Downloader under the same guard (docs/architecture.md, "Files").
package web
