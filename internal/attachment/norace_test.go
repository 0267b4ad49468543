//go:build !race

package attachment_test

// raceEnabled: this test binary runs under the race detector.
const raceEnabled = false
