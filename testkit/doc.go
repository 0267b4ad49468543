// Package testkit holds test doubles that no product code imports: a scriptable fake
// OpenAI-compatible server (testkit/openaitest), and a log's output that a test reads
// while loggers write it (testkit/logtest). The store's conformance suite stays
// beside the stores it checks (store/storetest), since it reads their internals
// (docs/architecture.md, "Packages").
package testkit
