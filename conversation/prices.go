package conversation

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"gopkg.in/yaml.v3"
)

// Price is a model's price in USD per million tokens (the MODEL_PRICES file).
type Price struct {
	Input  float64 `yaml:"input" json:"input"`
	Output float64 `yaml:"output" json:"output"`
}

// Prices are model prices by model name, as the MODEL_PRICES file gives them
// (docs/operations.md, "Usage, cost and budgets"); `threadwright usage` and
// `threadwright eval` price tokens with them.
type Prices map[string]Price

// LoadPrices reads the MODEL_PRICES file at path (YAML, or JSON, which YAML reads
// too); "" is no prices. Errors name the file and the problem: unknown fields,
// negative prices.
func LoadPrices(path string) (Prices, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("MODEL_PRICES: %w", err)
	}
	var p Prices
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("MODEL_PRICES: %s: want model: {input: USD per million tokens, output: USD per million tokens}: %w", path, err)
	}
	for model, pr := range p {
		if pr.Input < 0 || pr.Output < 0 {
			return nil, fmt.Errorf("MODEL_PRICES: %s: model %q: prices must not be negative", path, model)
		}
	}
	return p, nil
}

// Cost returns the cost in USD of prompt and completion tokens of model, and false
// when p has no price for model.
func (p Prices) Cost(model string, prompt, completion int64) (float64, bool) {
	pr, ok := p[model]
	if !ok {
		return 0, false
	}
	return (float64(prompt)*pr.Input + float64(completion)*pr.Output) / 1e6, true
}
