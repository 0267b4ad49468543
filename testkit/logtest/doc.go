// Package logtest holds a log's output for a test that reads it while loggers in
// other goroutines write it (slog handlers, a child process's output).
package logtest
