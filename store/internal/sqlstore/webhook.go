package sqlstore

import (
	"cmp"
	"slices"

	"github.com/threadwright/threadwright/conversation"
)

// SortEvents orders claimed webhook events by Seq, as they were written.
func SortEvents(events []conversation.Event) {
	slices.SortFunc(events, func(a, b conversation.Event) int { return cmp.Compare(a.Seq, b.Seq) })
}
