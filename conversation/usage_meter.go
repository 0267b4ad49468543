package conversation

import (
	"context"
	"sync"
)

// UsageMeter sums a turn's model usage by the model each chat completion asked for
// (the request's model field), so that the usage ledger gets one row per model
// actually called (docs/operations.md, "Usage, cost and budgets"). The service attaches one to
// each turn's context (WithUsageMeter); agents.Client.Complete feeds it. It is safe
// for concurrent use; a nil *UsageMeter ignores Add.
type UsageMeter struct {
	mu     sync.Mutex
	used   bool
	models []ModelUsage
}

// ModelUsage is the usage of one model: OpenAI's usage fields, summed.
type ModelUsage struct {
	Model string
	Usage Usage
}

type usageMeterKey struct{}

// WithUsageMeter returns ctx carrying m, which agents.Client.Complete feeds.
func WithUsageMeter(ctx context.Context, m *UsageMeter) context.Context {
	return context.WithValue(ctx, usageMeterKey{}, m)
}

// UsageMeterFrom returns the UsageMeter ctx carries, or nil.
func UsageMeterFrom(ctx context.Context) *UsageMeter {
	m, _ := ctx.Value(usageMeterKey{}).(*UsageMeter)
	return m
}

// Add counts u (one chat completion's usage, its retries' included) under model.
// A call that reported no tokens still marks the meter as used.
func (m *UsageMeter) Add(model string, u Usage) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.used = true
	if u.PromptTokens == 0 && u.CompletionTokens == 0 {
		return
	}
	for i := range m.models {
		if m.models[i].Model == model {
			m.models[i].Usage = m.models[i].Usage.Add(u)
			return
		}
	}
	m.models = append(m.models, ModelUsage{Model: model, Usage: u})
}

// Take returns the usage counted since the last Take, by model in the order they
// were first called, and starts over. used reports whether any call was ever
// counted (a model that does not go through agents.Client, such as playground/demo,
// leaves it false).
func (m *UsageMeter) Take() (models []ModelUsage, used bool) {
	if m == nil {
		return nil, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	models, m.models = m.models, nil
	return models, m.used
}
