package render

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation"
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

// FailureMessage is a failed step's message in lang: what failed (f, from
// conversation.Classifier.Explain), err's own words for people when it has them
// (UserMessage), and what the Retry button does (hint: "retry.step", "retry.answer"
// or "retry.command"; "" for none). A failure whose cause is unknown says so as
// conversation.ErrorReply does, without its "try again" when there is Retry. The
// caller scrubs configured secrets from it.
func FailureMessage(lang string, f conversation.Failure, err error, hint string) string {
	var parts []string
	switch {
	case f.Cause == conversation.CauseTool && f.Tool != "":
		parts = append(parts, Tr(lang, "failed.tool", f.Tool))
	case f.Cause != conversation.CauseUnknown:
		text := Tr(lang, "failed."+string(f.Cause))
		if f.Detail != "" {
			text = strings.TrimSuffix(text, ".") + " (" + f.Detail + ")."
		}
		parts = append(parts, text)
	}
	var u interface{ UserMessage() string }
	switch {
	case errors.As(err, &u) && strings.TrimSpace(u.UserMessage()) != "":
		parts = append(parts, strings.TrimSpace(u.UserMessage()))
	case len(parts) > 0:
	case errors.Is(err, context.DeadlineExceeded):
		parts = append(parts, Tr(lang, "failed.timeout"))
	default:
		parts = append(parts, Tr(lang, "failed.unknown"))
	}
	if hint != "" {
		parts = append(parts, Tr(lang, hint))
	}
	return strings.Join(parts, " ")
}
