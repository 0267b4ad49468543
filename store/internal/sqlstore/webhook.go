package sqlstore

import (
	"cmp"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/threadwright/threadwright/conversation"
)

// SortEvents orders claimed webhook events by Seq, as they were written.
func SortEvents(events []conversation.Event) {
	slices.SortFunc(events, func(a, b conversation.Event) int { return cmp.Compare(a.Seq, b.Seq) })
}

// ScanEvents reads claimed webhook events from rows (seq, team_id, channel_id,
// thread_ts, data as JSON text, attempts, last_error) and returns them by Seq (see
// SortEvents). It closes rows. Errors: a scan or rows error, or the decoding of an
// event's data, wrapped.
func ScanEvents(rows *sql.Rows) ([]conversation.Event, error) {
	defer rows.Close()
	var out []conversation.Event
	for rows.Next() {
		var (
			e    conversation.Event
			data []byte
		)
		if err := rows.Scan(&e.Seq, &e.Key.TeamID, &e.Key.ChannelID, &e.Key.ThreadTS, &data, &e.Attempts, &e.LastError); err != nil {
			return nil, err
		}
		if err := json.Unmarshal(data, &e.Data); err != nil {
			return nil, fmt.Errorf("decode webhook event %d: %w", e.Seq, err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	SortEvents(out)
	return out, nil
}

// ScanKeys reads thread keys from rows (team_id, channel_id, thread_ts) in their
// order. It closes rows. Errors: a scan or rows error.
func ScanKeys(rows *sql.Rows) ([]conversation.Key, error) {
	defer rows.Close()
	var keys []conversation.Key
	for rows.Next() {
		var k conversation.Key
		if err := rows.Scan(&k.TeamID, &k.ChannelID, &k.ThreadTS); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}
