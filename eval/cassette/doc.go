// Package cassette records the chat completions of eval runs and replays them
// (docs/eval.md, "Record and replay"), as VCR-style test libraries record HTTP.
//
// A Recorder wraps the model client of each run (Recorder.Model) and keeps every
// request, as the program made it, with the completion or the error it got; Save
// writes them to a JSON file, the cassette. A Player answers the runs from a cassette
// instead of a model (Player.Model): a request is matched to a recorded one of the
// same case and run by its JSON, normalized (Normalize masks the timestamps, dates
// and references that change from run to run without the prompt changing). A request
// that matches none is drift, an error wrapping ErrDrift that names the nearest
// recorded request and where it differs; the replay never calls out.
//
// The cassette sits at the level of agents.Completer, the interface every model call
// of threadwright goes through (the main model, the small one, the model profiles,
// the offline demo), rather than HTTP: one cassette covers every endpoint, and a
// replay needs no server. A completion replays as it was recorded, field for field,
// in one attempt.
package cassette
