package workflow

import "testing"

func TestClassifyReply(t *testing.T) {
	for _, tt := range []struct {
		reply string
		want  Decision
	}{
		{"looks good", DecisionApprove},
		{"Looks good!", DecisionApprove},
		{"LGTM 👍", DecisionApprove},
		{"👍", DecisionApprove},
		{"✅✅", DecisionApprove},
		{"approve", DecisionApprove},
		{"Approved.", DecisionApprove},
		{"ok", DecisionApprove},
		{"That's good", DecisionApprove},
		{"ок", DecisionApprove},
		{"Ок!", DecisionApprove},
		{"подтверждаю", DecisionApprove},
		{"Подтверждаю 👍", DecisionApprove},
		{"Всё хорошо", DecisionApprove},
		{"пойдёт", DecisionApprove},
		{"approve and continue", DecisionApprove},
		{"Looks good, and thank you!", DecisionApprove},
		{"Да, и спасибо", DecisionApprove},
		{"ок, и дальше", DecisionApprove},
		{"approve and add a summary", DecisionChange},
		{"approve but change the title", DecisionChange},
		{"Looks good, but make it shorter", DecisionChange},
		{"ok, just fix the typo", DecisionChange},
		{"ок, только короче", DecisionChange},
		{"Подтверждаю, но уберите второй абзац", DecisionChange},
		{"make it shorter", DecisionUnknown},
		{"сделай короче", DecisionUnknown},
		{"good idea to add a table", DecisionUnknown},
		{"not good", DecisionUnknown},
		{"no", DecisionUnknown},
		{"Why is the budget so low?", DecisionQuestion},
		{"what does ARR mean?", DecisionQuestion},
		{"почему такой бюджет?", DecisionQuestion},
		{"что значит ARR?", DecisionQuestion},
		{"why not add a table", DecisionUnknown},
		{"ok?", DecisionAmbiguous},
		{"looks good?", DecisionAmbiguous},
		{"ок?", DecisionAmbiguous},
		{"", DecisionUnknown},
		{"?!", DecisionUnknown},
	} {
		if got := ClassifyReply(tt.reply); got != tt.want {
			t.Errorf("ClassifyReply(%q) = %q, want %q", tt.reply, got, tt.want)
		}
	}
}
