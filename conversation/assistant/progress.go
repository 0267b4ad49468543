package assistant

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/threadwright/threadwright/conversation"
	"github.com/threadwright/threadwright/conversation/render"
	"github.com/threadwright/threadwright/conversation/turns"
)

// progressCard shows what a turn's executor is doing: the thread's status, and a
// message with the current step and a Stop button, posted at the first step and
// updated at most once per turns.StatusInterval (Slack's chat.update is rate limited).
type progressCard struct {
	s       *Handler
	r       *turns.Run
	log     *slog.Logger
	key     conversation.Key
	inputID string
	out     *turns.Outbox
	lang    string // of the card's words (render.UILang)

	// mu guards the fields below and serializes the calls to Slack.
	mu sync.Mutex
	ts string    // the progress message, once posted
	at time.Time // when it was last posted or updated
	// tasks, when it shows the turn's thinking steps and Stop in the streamed
	// answer, makes the progress message needless: report then sets the status only.
	tasks *answerStream
}

// report is the executor's Progress callback.
func (p *progressCard) report(status string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.out.Lost() {
		return // another worker runs the input now
	}
	now := p.s.cfg.Now()
	if p.ts != "" && now.Sub(p.at) < turns.StatusInterval {
		return // too soon after the last update (chat.update is rate limited)
	}
	p.at = now
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if p.ts == "" && p.tasks.showsTasks() {
		return // the streamed answer shows the steps and Stop, and no status is needed
	}
	p.r.SetStatus(ctx, status)
	card := render.StopCard(p.lang, p.key, p.inputID, status)
	if p.ts == "" {
		ts, err := p.out.PostCard(ctx, card)
		if err != nil {
			p.log.Debug("progress message not posted", "error", err)
			return
		}
		p.ts = ts
		return
	}
	if err := p.s.cfg.Messenger.UpdateCard(ctx, p.key, p.ts, card); err != nil {
		p.log.Debug("progress message not updated", "error", err)
	}
}

// finish replaces the progress message, if one was posted, with note and no button.
func (p *progressCard) finish(ctx context.Context, note string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ts == "" || p.out.Lost() {
		return
	}
	card := render.NoteCard(note)
	if err := p.s.cfg.Messenger.UpdateCard(ctx, p.key, p.ts, card); err != nil {
		p.log.Debug("progress message not finished", "error", err)
	}
}
