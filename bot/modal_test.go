package bot

import (
	"reflect"
	"testing"

	"github.com/slack-go/slack"

	"github.com/threadwright/threadwright/conversation"
)

// TestModalFields builds the modal of a workflow's missing inputs and reads its
// submissions: values by field id, or an error under each field to correct.
func TestModalFields(t *testing.T) {
	a := conversation.Action{Name: conversation.ActionInputs, Channel: "C1", ThreadTS: "1.2"}
	m := conversation.Modal{Title: "Blog article", Submit: "Start", Lang: "ru", Fields: []conversation.Field{
		{ID: "topic", Label: "What is it about?", Required: true},
		{ID: "words", Label: "How many words?", Number: true},
	}}
	v, err := modalView(a, m)
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Blocks.BlockSet) != 2 || v.CallbackID != ModalCallbackID || v.Submit.Text != "Start" {
		t.Fatalf("view %+v", v)
	}
	topic := v.Blocks.BlockSet[0].(*slack.InputBlock)
	words := v.Blocks.BlockSet[1].(*slack.InputBlock)
	if topic.Optional || !words.Optional || topic.Label.Text != "What is it about?" || topic.BlockID != "tw_f.ru.r.topic" || words.BlockID != "tw_f.ru.n.words" {
		t.Fatalf("blocks %+v %+v", topic, words)
	}
	state := func(topic, words string) *slack.ViewState {
		return &slack.ViewState{Values: map[string]map[string]slack.BlockAction{
			"tw_f.ru.r.topic": {fieldActionID: {Value: topic}},
			"tw_f.ru.n.words": {fieldActionID: {Value: words}},
		}}
	}
	for _, tt := range []struct {
		name         string
		topic, words string
		values, errs map[string]string
	}{
		{"Valid", " Go ", "1500", map[string]string{"topic": "Go", "words": "1500"}, nil},
		{"OptionalEmpty", "Go", "", map[string]string{"topic": "Go", "words": ""}, nil},
		{"NotANumber", "Go", "many", nil, map[string]string{"tw_f.ru.n.words": "Введите число, например 1500."}},
		{"RequiredSpaces", "  ", "12", nil, map[string]string{"tw_f.ru.r.topic": "Заполните это поле."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			values, errs := fieldValues(state(tt.topic, tt.words))
			if !reflect.DeepEqual(errs, tt.errs) || (tt.errs == nil && !reflect.DeepEqual(values, tt.values)) {
				t.Errorf("values %v, errors %v", values, errs)
			}
		})
	}
	if values, errs := fieldValues(&slack.ViewState{Values: map[string]map[string]slack.BlockAction{modalBlockID: {modalActionID: {Value: "x"}}}}); values != nil || errs != nil {
		t.Errorf("a one-input modal read as fields: %v %v", values, errs)
	}
}
