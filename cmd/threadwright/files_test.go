package main

import (
	"reflect"
	"strings"
	"testing"
)

// VISION_MODELS' default patterns match the models that see and not the others.
func TestModelMatchesVisionModels(t *testing.T) {
	f, _ := reflect.TypeFor[Config]().FieldByName("VisionModels")
	patterns := strings.Split(f.Tag.Get("default"), ",")
	for model, want := range map[string]bool{
		"gpt-4o": true, "gpt-4o-mini": true, "gpt-4.1-nano": true, "gpt-5": true, "o3-mini": true, "o4-mini": true,
		"GPT-4o": true, "claude-3-5-sonnet": true, "gemini-2.0-flash": true,
		"gpt-3.5-turbo": false, "gpt-test": false, "o1-mini": false, "text-embedding-3-small": false,
	} {
		if got := modelMatches(patterns, model); got != want {
			t.Errorf("modelMatches(%q) = %v, want %v", model, got, want)
		}
	}
}
