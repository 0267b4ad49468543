// Package eval runs eval cases against the program and judges them: `threadwright
// eval` (docs/eval.md). A team that changes its model, its prompts, its executor
// instructions or its knowledge base runs the cases to see what got better or worse.
//
// A case (Case, a YAML file; Load, LoadFS) holds a thread as people would type and
// click it, what the run starts with (settings, files, knowledge documents, stub
// tools) and its expectations. The Runner runs each case Repeat times, Concurrency
// runs at once. Each run has its own emulated Slack (playground/emulator) and its own
// bot, which a Launcher starts through the program's real wiring (cmd/threadwright's
// Main) on a throwaway store: scope check, executor or planner, synthesizer and
// workflows all run as in production. Taps on the model clients, the tools and the
// scope check (Launch.Model, Tool, Scope) record what the run did; the driver acts as
// the people and waits for the bot after each step; the thread, the workflow run's
// checkpoint and the uploaded files are read at the end (Transcript).
//
// The checks are judged without a model: the tool calls against the expected ones in
// a match mode (exact, in_order, any_order, subset, superset) with argument patterns;
// facts an answer must or must not say; every source an answer cites was returned by
// a tool; no tool with side effects ran without a person's approval; the scope
// verdict; a workflow's artifact statuses and criteria checks; bounds on tokens, cost
// (MODEL_PRICES) and latency; recall@k and MRR of search_knowledge for retrieval
// questions. An optional rubric is graded by a second model (RubricJudge), within a
// cost bound, and reported apart. The Report is written as a table (WriteTable, with
// Progress while it runs), JSON (Report.WriteJSON) and JUnit XML (WriteJUnit);
// Compare shows what regressed between two reports.
//
// Package eval/cassette records every model call of the runs and replays them, so
// that a team records once with its real model and its CI replays; eval/evalset is
// the shipped set of cases.
//
// # Inside
//
// From the bottom up: the case and its loading (case.go, load.go), what a run
// launches (launch.go) and records (tap.go), small text helpers (text.go), the
// trajectory match (trajectory.go), the checks (judge.go, citations.go), the driver
// of the people (drive.go), the transcript (observe.go), retrieval scores
// (retrieval.go), the rubric (rubric.go), the report (report.go) and its forms
// (table.go, junit.go, compare.go), and the runner (runner.go).
package eval
