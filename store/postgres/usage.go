package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/store/internal/sqlstore"
)

// UsageLedger is the ledger of the tokens models used (migration 00010). Save writes
// a turn's rows (saveRestSQL's usage); UsageReport and UsageSince read them.
type UsageLedger struct{ *pool }

var _ conversation.UsageStore = (*UsageLedger)(nil)

// UsageReport sums the usage ledger since since, grouped by by, largest total first.
// Errors: an unknown by; the database's, wrapped.
func (s *UsageLedger) UsageReport(ctx context.Context, since time.Time, by conversation.UsageBy) ([]conversation.UsageTotal, error) {
	col, err := sqlstore.UsageGroupColumn(by)
	if err != nil {
		return nil, err
	}
	var rows []sqlstore.UsageTotalRow
	if err := s.db.SelectContext(ctx, &rows, sqlstore.UsageReportSQL(col, "$1"), since.UTC()); err != nil {
		return nil, classify(fmt.Errorf("usage report by %s: %w", by, err))
	}
	return sqlstore.UsageTotals(rows), nil
}

// UsageSince returns the ledger rows f selects, oldest first, through the index of
// f's person or channel.
func (s *UsageLedger) UsageSince(ctx context.Context, f conversation.UsageFilter) ([]conversation.UsageRecord, error) {
	q := `SELECT ` + sqlstore.UsageCols + ` FROM token_usage WHERE team_id = $1 AND created_at >= $2`
	args := []any{f.TeamID, f.Since.UTC()}
	if f.UserID != "" {
		args = append(args, f.UserID)
		q += fmt.Sprintf(` AND user_id = $%d`, len(args))
	}
	if f.ChannelID != "" {
		args = append(args, f.ChannelID)
		q += fmt.Sprintf(` AND channel_id = $%d`, len(args))
	}
	var rows []sqlstore.UsageRow[time.Time]
	if err := s.db.SelectContext(ctx, &rows, q+` ORDER BY created_at`, args...); err != nil {
		return nil, classify(fmt.Errorf("usage since %s: %w", f.Since, err))
	}
	return sqlstore.UsageList(rows), nil
}
