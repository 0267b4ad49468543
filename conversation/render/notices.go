package render

import (
	"fmt"
	"math"
	"time"
)

// WaitWords says d in lang, rounded up: "1 second", "40 seconds", "3 minutes".
func WaitWords(lang string, d time.Duration) string {
	secs := max(1, int(math.Ceil(d.Seconds())))
	n, unit := secs, "second"
	if secs > 90 {
		n, unit = int(math.Ceil(float64(secs)/60)), "minute"
	}
	if n != 1 {
		unit += "s"
	}
	return fmt.Sprintf("%d %s", n, Tr(lang, "unit."+unit))
}
