package service

// ForeignCommand is foreignCommand, for tests.
var ForeignCommand = foreignCommand
