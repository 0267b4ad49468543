package service

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
	"github.com/threadwright/threadwright/conversation/workflowrun"
)

// Budgets (docs/operations.md, "Usage, cost and budgets"): before a person's message, command or
// click runs (a Stop click and the commands cancel, help, list and status excepted:
// they cost nothing and must always act; an assistant thread's opening asks for
// nothing), the
// tokens that person, and that channel, used in the last BudgetWindow are summed from
// the usage ledger (UsageStore, the rows every saved turn writes). When either reached
// its budget, no model call is made: the person gets one ephemeral notice naming the
// admins and when the budget frees up, and the input is finished as done (it is not
// run again). A ledger that cannot be read lets the input through: budgets bound
// spending, they are not an access control.

// BudgetWindow is the window of the token budgets: a person's or a channel's tokens
// count against them for this long after their turn was saved.
const BudgetWindow = 24 * time.Hour

// budgeted reports whether r's input is held to the budgets: a person's input other
// than a Stop click, when a budget is set and the store keeps the ledger.
func (s *Service) budgeted(r *turns.Run) bool {
	if s.cfg.Usage == nil || (s.cfg.BudgetTokensPerUserDay <= 0 && s.cfg.BudgetTokensPerChannelDay <= 0) {
		return false
	}
	in := r.In
	if in.User() == "" || in.Kind == conversation.KindPipeline || in.Kind == conversation.KindAssistantThread || in.Kind == conversation.KindDelete {
		return false // a pipeline's part, an assistant thread opened, a deletion: no request
	}
	if in.Kind == conversation.KindCommand && in.Command != nil && workflowrun.FreeCommand(in.Command.Line) {
		return false
	}
	return in.Kind != conversation.KindAction || in.Action == nil || in.Action.Action.Name != conversation.ActionStop
}

// budgetTimeout bounds the reading of the usage ledger before an input runs: when
// the store does not answer in time, the input is let through.
const budgetTimeout = 2 * time.Second

// budgetRefusal says which budget an input is over.
type budgetRefusal struct {
	channel bool      // the channel's budget, not the person's
	used    int64     // tokens in the window
	budget  int64     // the budget reached
	freeAt  time.Time // when used drops below budget again
}

// overBudget checks r's input against the budgets and, when one is reached, tells
// the person and finishes the input: refused is true then, and err is finish's.
func (s *Service) overBudget(ctx context.Context, r *turns.Run) (refused bool, err error) {
	if !s.budgeted(r) {
		return false, nil
	}
	b := s.checkBudgets(ctx, r)
	if b == nil {
		return false, nil
	}
	user := r.In.User()
	r.NoteOverBudget()
	r.Log.Info("input refused: over a token budget", "user", user, "channel_budget", b.channel,
		"used_tokens", b.used, "budget_tokens", b.budget, "frees_at", b.freeAt)
	fctx, cancel := r.Final(ctx)
	defer cancel()
	lang := "en"
	if l, err := s.cfg.Messenger.UserLocale(fctx, user); err == nil && l != "" {
		lang = render.UILang(l)
	}
	key := r.In.Key
	if m := r.In.Message; m != nil && (m.Direct || m.ThreadTS == "" || m.ThreadTS == m.TS) {
		key.ThreadTS = ""
	}
	if err := s.cfg.Messenger.PostEphemeral(fctx, key, user, budgetText(lang, b, s.cfg.Admins)); err != nil {
		r.Log.Warn("notice of a budget refusal not posted", "error", err)
	}
	return true, r.Drop(ctx, conversation.InputDone)
}

// checkBudgets returns the budget r's input is over (the person's first), or nil.
func (s *Service) checkBudgets(ctx context.Context, r *turns.Run) *budgetRefusal {
	now := s.cfg.Now()
	since := now.Add(-BudgetWindow)
	check := func(budget int64, f conversation.UsageFilter, channel bool) *budgetRefusal {
		if budget <= 0 {
			return nil
		}
		f.TeamID, f.Since = r.In.Key.TeamID, since
		cctx, cancel := context.WithTimeout(ctx, budgetTimeout)
		rows, err := s.cfg.Usage.UsageSince(cctx, f)
		cancel()
		if err != nil {
			if !errors.Is(err, context.Canceled) {
				r.Log.Warn("token usage not read; the input is let through", "error", err)
			}
			return nil
		}
		return overBudgetAt(rows, budget, channel)
	}
	if b := check(s.cfg.BudgetTokensPerUserDay, conversation.UsageFilter{UserID: r.In.User()}, false); b != nil {
		return b
	}
	return check(s.cfg.BudgetTokensPerChannelDay, conversation.UsageFilter{ChannelID: r.In.Key.ChannelID}, true)
}

// overBudgetAt returns the refusal when rows (the window's ledger rows, oldest
// first) total budget tokens or more, with the time the total drops below budget:
// the oldest rows leave the window BudgetWindow after they were saved.
func overBudgetAt(rows []conversation.UsageRecord, budget int64, channel bool) *budgetRefusal {
	var used int64
	for _, r := range rows {
		used += r.Tokens()
	}
	if used < budget {
		return nil
	}
	b := &budgetRefusal{channel: channel, used: used, budget: budget}
	left := used
	for _, r := range rows {
		left -= r.Tokens()
		if left < budget {
			b.freeAt = r.At.Add(BudgetWindow)
			break
		}
	}
	return b
}

// budgetText is the notice of b in lang, naming admins (Slack user ids).
func budgetText(lang string, b *budgetRefusal, admins []string) string {
	who := render.Tr(lang, "budget.admins_unknown")
	if len(admins) > 0 {
		mentions := make([]string, len(admins))
		for i, a := range admins {
			mentions[i] = "<@" + a + ">"
		}
		who = strings.Join(mentions, ", ")
	}
	key := "budget.user"
	if b.channel {
		key = "budget.channel"
	}
	return render.Tr(lang, key, b.used, b.budget, b.freeAt.UTC().Format(render.Tr(lang, "budget.when")), who)
}
