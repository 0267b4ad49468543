package conversation

// Holds reports whether the service holds (or is taking) thread key, for tests.
func (s *Service) Holds(key Key) bool { return s.holds(key) }

// ForeignCommand is foreignCommand, for tests.
var ForeignCommand = foreignCommand
