package workflow

import (
	"strings"
	"unicode"

	"github.com/threadwright/threadwright/internal/textcut"
)

// MaxSubject is the longest Subject, in runes.
const MaxSubject = 200

// Waiting is where a running run stands for people: the artifact its next step is
// about and who that step waits for (docs/workflows.md, "Commands"). The zero
// value is a run that waits for nothing (finished, cancelled, or every artifact
// approved).
type Waiting struct {
	// Artifact is the id of the first artifact, in the definition's order, that is
	// not approved.
	Artifact string
	// Status is that artifact's status.
	Status ArtifactStatus
	// Action is what a person must do: PermApprove for a text under review,
	// PermKeep for a stale one (keep or regenerate), "" for a pick among options
	// (anyone may pick) or while the bot works (Bot).
	Action Permission
	// People are the Slack user IDs who may do Action; empty with Anyone or Bot.
	People []string
	// Anyone is true when anyone in the thread may act (a pick, or the rule
	// "anyone").
	Anyone bool
	// Bot is true when the bot is working on Artifact (pending, option chosen,
	// running), so nobody needs to act.
	Bot bool
}

// Waiting returns where run s stands: its first artifact not approved, and who may
// act on it by the rules of May (Who).
func (m Machine) Waiting(s *State) Waiting {
	if s == nil || s.Status != RunRunning {
		return Waiting{}
	}
	for _, id := range m.Def.Order() {
		st, ok := s.Artifacts[id]
		if !ok || st.Status == StatusApproved {
			continue
		}
		w := Waiting{Artifact: id, Status: st.Status}
		switch st.Status {
		case StatusOptionsGenerated:
			w.Anyone = true
		case StatusGenerated:
			w.Action = PermApprove
			w.People, w.Anyone = m.Who(s, PermApprove)
		case StatusStale:
			w.Action = PermKeep
			w.People, w.Anyone = m.Who(s, PermKeep)
		default:
			w.Bot = true
		}
		return w
	}
	return Waiting{}
}

// Subject is what run s is about, for a status line: its topic input, or else its
// first filled input in d's order, cut to MaxSubject runes; "" when it has none.
func (d *Definition) Subject(s *State) string {
	if s == nil {
		return ""
	}
	v := s.Inputs["topic"]
	for i := 0; v == "" && i < len(d.Inputs); i++ {
		v = s.Inputs[d.Inputs[i].ID]
	}
	return textcut.Ellipsis(strings.Join(strings.Fields(v), " "), MaxSubject, unicode.IsSpace)
}
