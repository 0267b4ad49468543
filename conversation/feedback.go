package conversation

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"time"
)

// Feedback on answers (docs/operations.md, "Feedback"): every assistant answer carries a thumbs up
// and a thumbs down; a click is stored with the message, the person and the turn that
// wrote the answer, and never sent anywhere else.

// Rating is a person's verdict on an answer.
type Rating string

// The ratings of the feedback buttons.
const (
	RatingPositive Rating = "positive"
	RatingNegative Rating = "negative"
)

// Valid reports whether r is RatingPositive or RatingNegative.
func (r Rating) Valid() bool { return r == RatingPositive || r == RatingNegative }

// MaxFeedbackReason is the most characters of a reason that are stored.
const MaxFeedbackReason = 3000

// Feedback is one person's rating of one answer of the bot's. A person has one
// Feedback per message: a second click replaces the first.
type Feedback struct {
	// Key is the answer's thread, MessageTS the answer's message (its last one, which
	// carries the buttons).
	Key       Key
	MessageTS string
	// UserID is who clicked.
	UserID string
	Rating Rating
	// Reason is what a person giving RatingNegative typed in the modal ("" for none).
	Reason string

	// The turn that wrote the answer, from the message the turn saved (empty when
	// the answer is not found): the model, the strategy (react, planner; "" when
	// the executor is not a router), the tools used, each once, how long the turn
	// took, and its tokens (OpenAI's usage, summed over every call).
	Model            string
	Strategy         string
	Tools            []string
	Latency          time.Duration
	PromptTokens     int
	CompletionTokens int

	// CreatedAt is when the click was stored (set by the store; the latest click's).
	CreatedAt time.Time
}

// FeedbackStore stores feedback (store/postgres and store/sqlite implement it).
type FeedbackStore interface {
	// SaveFeedback stores f, replacing the feedback of f.UserID on the same message
	// (f.Key.ChannelID, f.MessageTS), and sets its CreatedAt to now. Errors: the
	// database's.
	SaveFeedback(ctx context.Context, f Feedback) error
	// ListFeedback returns the feedback stored since since, oldest first.
	ListFeedback(ctx context.Context, since time.Time) ([]Feedback, error)
	// AnswerAt returns the assistant message of thread key whose SlackTS is ts.
	// Errors: ErrNotFound.
	AnswerAt(ctx context.Context, key Key, ts string) (Message, error)
}

// FeedbackCount counts the ratings of one channel and strategy.
type FeedbackCount struct {
	Channel  string `json:"channel"`
	Strategy string `json:"strategy"`
	Positive int    `json:"positive"`
	Negative int    `json:"negative"`
}

// FeedbackReport is what `threadwright feedback` prints: counts per channel and
// strategy, and the negative ratings with their reasons.
type FeedbackReport struct {
	Since    time.Time       `json:"since"`
	Counts   []FeedbackCount `json:"counts"`
	Negative []Feedback      `json:"negative"`
}

// NewFeedbackReport summarizes items (feedback since since): counts ordered by
// channel then strategy, negative ratings newest first.
func NewFeedbackReport(since time.Time, items []Feedback) FeedbackReport {
	r := FeedbackReport{Since: since, Counts: []FeedbackCount{}, Negative: []Feedback{}}
	at := map[[2]string]int{}
	for _, f := range items {
		k := [2]string{f.Key.ChannelID, f.Strategy}
		i, ok := at[k]
		if !ok {
			i = len(r.Counts)
			at[k] = i
			r.Counts = append(r.Counts, FeedbackCount{Channel: f.Key.ChannelID, Strategy: f.Strategy})
		}
		if f.Rating == RatingPositive {
			r.Counts[i].Positive++
		} else {
			r.Counts[i].Negative++
			r.Negative = append(r.Negative, f)
		}
	}
	slices.SortFunc(r.Counts, func(a, b FeedbackCount) int {
		return cmp.Or(cmp.Compare(a.Channel, b.Channel), cmp.Compare(a.Strategy, b.Strategy))
	})
	slices.SortStableFunc(r.Negative, func(a, b Feedback) int { return b.CreatedAt.Compare(a.CreatedAt) })
	return r
}

// MarshalJSON writes f with snake_case names, the latency in milliseconds.
func (f Feedback) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Team             string    `json:"team_id,omitempty"`
		Channel          string    `json:"channel"`
		ThreadTS         string    `json:"thread_ts"`
		MessageTS        string    `json:"message_ts"`
		UserID           string    `json:"user"`
		Rating           Rating    `json:"rating"`
		Reason           string    `json:"reason,omitempty"`
		Model            string    `json:"model,omitempty"`
		Strategy         string    `json:"strategy,omitempty"`
		Tools            []string  `json:"tools,omitempty"`
		LatencyMS        int64     `json:"latency_ms"`
		PromptTokens     int       `json:"prompt_tokens"`
		CompletionTokens int       `json:"completion_tokens"`
		CreatedAt        time.Time `json:"created_at"`
	}{f.Key.TeamID, f.Key.ChannelID, f.Key.ThreadTS, f.MessageTS, f.UserID, f.Rating, f.Reason, f.Model, f.Strategy,
		f.Tools, f.Latency.Milliseconds(), f.PromptTokens, f.CompletionTokens, f.CreatedAt})
}
