package workflow

import "fmt"

// The model's own passes over an artifact (docs/workflows.md, "Pipelines"): self_review on a
// choice artifact's options, enhance on a draft or auto artifact's text.

// The outcomes of an enhancement pass (ArtifactState.Enhancement).
const (
	// EnhanceDone: the text was enhanced by Enhance.Model.
	EnhanceDone = "enhanced"
	// EnhanceSkipped: the deployment defines no profile Enhance.Model.
	EnhanceSkipped = "skipped"
	// EnhanceFailed: the enhancement call failed; the text is as written.
	EnhanceFailed = "failed"
)

// enhanceAt returns the line of key in the artifact's enhance mapping, or of the
// enhance key.
func (a artifactPosition) enhanceAt(key string) int { return a.keyIn(a.enhance, "enhance", key) }

// checkPasses checks every artifact's self_review and enhance: self_review needs
// mode choice and criteria to review against; enhance needs mode draft or auto, a
// valid model profile name and a prompt that is a valid template. The profile need
// not be defined by the deployment (it is not in Profiles): without it the pass is
// skipped.
func (d checking) checkPasses(ps *problems, pos *positions) {
	for i := range d.Artifacts {
		a, ap := &d.Artifacts[i], pos.artifact(i)
		what := fmt.Sprintf("artifact %q", a.ID)
		valid := a.Mode == ModeChoice || a.Mode == ModeDraft || a.Mode == ModeAuto
		if a.SelfReview && ap.ok("self_review") && valid {
			switch {
			case a.Mode != ModeChoice:
				ps.addf(ap.at("self_review"), "%s: self_review needs mode: %s (mode is %s): it reviews the proposed options", what, ModeChoice, a.Mode)
			case len(a.Criteria) == 0:
				ps.addf(ap.at("self_review"), "%s: self_review needs criteria: the options are reviewed against them", what)
			}
		}
		e := a.Enhance
		if e == nil || !ap.ok("enhance") || ap.enhance.broken {
			continue
		}
		if valid && a.Mode == ModeChoice {
			ps.addf(ap.at("enhance"), "%s: enhance needs mode %s or %s (mode is %s)", what, ModeDraft, ModeAuto, a.Mode)
		}
		switch {
		case e.Model == "":
			if ap.enhance.ok("model") {
				ps.addf(ap.enhanceAt("model"), "%s: enhance: missing model: the model profile (MODEL_PROFILES) that enhances the text, like model: enhance", what)
			}
		case !profileRE.MatchString(e.Model):
			ps.addf(ap.enhanceAt("model"), "%s: enhance: model %q is invalid: a model profile name (MODEL_PROFILES) uses lower-case letters, digits, \"_\" and \"-\", starting with a letter or digit", what, e.Model)
		}
		switch {
		case e.Prompt == "":
			if ap.enhance.ok("prompt") {
				ps.addf(ap.enhanceAt("prompt"), "%s: enhance: missing prompt: what the enhancement does, like prompt: Sharpen the prose, keep every fact", what)
			}
		case ap.enhance.ok("prompt"):
			if _, err := d.expandPrompt(e.Prompt, nil); err != nil {
				ps.addf(ap.enhanceAt("prompt"), "%s: enhance: prompt template %s", what, templateReason(err))
			}
		}
	}
}
