package main

// version is the build's version, set at build time: -ldflags "-X main.version=v1.2.3".
// It is printed by `threadwright version`, logged at start, and exported with the
// metrics (threadwright_build_info) and the traces (service.version).
var version = "dev"
