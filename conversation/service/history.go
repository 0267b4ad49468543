package service

import (
	"context"
	"log/slog"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/history"
)

// compact bounds the history of cp (compactor.compact, with the configured
// Summarizer, HistoryTokens and HistoryMessages).
func (s *Service) compact(ctx context.Context, log *slog.Logger, cp *conversation.Checkpoint) {
	history.Compactor{Summarizer: s.cfg.Summarizer, Tokens: s.cfg.HistoryTokens, Messages: s.cfg.HistoryMessages}.Compact(ctx, log, cp)
}
