package sqlite

import (
	"context"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// UsageLedger is the ledger of the tokens models used (migration 00010). Save writes
// a turn's rows (insertUsageSQL); UsageReport and UsageSince read them.
type UsageLedger struct{ *pool }

var _ conversation.UsageStore = (*UsageLedger)(nil)

// insertUsageSQL writes Turn.Usage to the usage ledger (migration 00010).
const insertUsageSQL = `INSERT INTO token_usage (` + sqlstore.UsageCols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// UsageReport sums the usage ledger since since, grouped by by, largest total first.
// Errors: an unknown by; the database's, wrapped.
func (s *UsageLedger) UsageReport(ctx context.Context, since time.Time, by conversation.UsageBy) ([]conversation.UsageTotal, error) {
	col, err := sqlstore.UsageGroupColumn(by)
	if err != nil {
		return nil, err
	}
	var rows []sqlstore.UsageTotalRow
	if err := s.read.SelectContext(ctx, &rows, sqlstore.UsageReportSQL(col, "?"), timestamp(since)); err != nil {
		return nil, classify(fmt.Errorf("usage report by %s: %w", by, err))
	}
	return sqlstore.UsageTotals(rows), nil
}

// UsageSince returns the ledger rows f selects, oldest first, through the index of
// f's person or channel.
func (s *UsageLedger) UsageSince(ctx context.Context, f conversation.UsageFilter) ([]conversation.UsageRecord, error) {
	q := `SELECT ` + sqlstore.UsageCols + ` FROM token_usage WHERE team_id = ? AND created_at >= ?`
	args := []any{f.TeamID, timestamp(f.Since)}
	if f.UserID != "" {
		q += ` AND user_id = ?`
		args = append(args, f.UserID)
	}
	if f.ChannelID != "" {
		q += ` AND channel_id = ?`
		args = append(args, f.ChannelID)
	}
	var rows []sqlstore.UsageRow[timestamp]
	if err := s.read.SelectContext(ctx, &rows, q+` ORDER BY created_at`, args...); err != nil {
		return nil, classify(fmt.Errorf("usage since %s: %w", f.Since, err))
	}
	return sqlstore.UsageList(rows), nil
}
