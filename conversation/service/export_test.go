package service

import "github.com/threadwright/threadwright/conversation"

// Holds reports whether the service holds (or is taking) thread key, for tests.
func (s *Runtime) Holds(key conversation.Key) bool { return s.holds(key) }

// ForeignCommand is foreignCommand, for tests.
var ForeignCommand = foreignCommand
