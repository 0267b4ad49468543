package workflow

import (
	"fmt"
	"strings"
)

// Permission names an action whose people a workflow's permissions setting rules
// (docs/workflows.md, "Permissions").
type Permission string

// The actions a workflow's permissions rule.
const (
	// PermApprove: approve an artifact under review, keep all stale ones, and edit an
	// auto artifact (whose edited text is approved as it is).
	PermApprove Permission = "approve"
	// PermKeep: keep a stale artifact as it is. Keeping approves, so it follows
	// approve's rule: keep may only repeat it.
	PermKeep Permission = "keep"
	// PermRestart: restart an artifact (button, menu or command).
	PermRestart Permission = "restart"
	// PermEdit: edit an artifact's text (button, menu or command).
	PermEdit Permission = "edit"
	// PermCancel: cancel the run, or start another in its thread once it completed.
	PermCancel Permission = "cancel"
)

// The rules of a permission.
const (
	// RuleAnyone lets anyone in the thread (the deployment's APPROVER_USER_IDS, when
	// set, still decide approve and keep).
	RuleAnyone = "anyone"
	// RuleStarter lets the person who started the run, and the deployment's
	// approvers (APPROVER_USER_IDS).
	RuleStarter = "starter"
	// RuleApprovers lets the deployment's approvers (APPROVER_USER_IDS), or, when it
	// names none, the person who started the run.
	RuleApprovers = "approvers"
)

// The default rules: approving as before permissions existed (anyone, or what the
// approvers shorthand says), and the actions that undo or discard someone's work
// (restart, edit, cancel) for the starter and the approvers, so that a bystander
// cannot take a run over (cancel it and start their own in its thread).
const (
	DefaultApproveRule = RuleAnyone
	DefaultChangeRule  = RuleStarter
)

// The values of Definition.Approvers, a shorthand for Permissions.Approve (any rule
// of Permissions is accepted).
const (
	// ApproversAnyone lets anyone in the thread approve (the default).
	ApproversAnyone = RuleAnyone
	// ApproversStarter lets only the person who started the workflow approve (or
	// APPROVER_USER_IDS, when the deployment sets it).
	ApproversStarter = RuleStarter
)

// Rule returns the rule of p in d, defaults applied.
func (d *Definition) Rule(p Permission) string {
	var set string
	switch p {
	case PermApprove, PermKeep:
		return firstSet(d.Permissions.Approve, d.Approvers, DefaultApproveRule)
	case PermRestart:
		set = d.Permissions.Restart
	case PermEdit:
		set = d.Permissions.Edit
	case PermCancel:
		set = d.Permissions.Cancel
	}
	return firstSet(set, DefaultChangeRule)
}

func firstSet(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}

// checkPermissions validates d's permissions and approvers shorthand.
func (d checking) checkPermissions(ps *problems, dp, pp position) {
	rules := []string{RuleAnyone, RuleStarter, RuleApprovers}
	valid := func(r string) bool { return r == "" || r == RuleAnyone || r == RuleStarter || r == RuleApprovers }
	if !valid(d.Approvers) {
		ps.addf(dp.at("approvers"), "approvers %q is invalid: use %s", d.Approvers, strings.Join(rules, ", "))
	}
	p := d.Permissions
	for _, f := range []struct {
		key, rule string
	}{{"approve", p.Approve}, {"keep", p.Keep}, {"restart", p.Restart}, {"edit", p.Edit}, {"cancel", p.Cancel}} {
		if !valid(f.rule) && pp.ok(f.key) {
			ps.addf(pp.at(f.key), "permissions: %s %q is invalid: use %s", f.key, f.rule, strings.Join(rules, ", "))
		}
	}
	if p.Approve != "" && d.Approvers != "" && p.Approve != d.Approvers {
		ps.addf(pp.at("approve"), "permissions: approve %q contradicts approvers %q: approvers is a shorthand for permissions: approve; keep one", p.Approve, d.Approvers)
	}
	if approve := firstSet(p.Approve, d.Approvers, DefaultApproveRule); p.Keep != "" && valid(p.Keep) && p.Keep != approve {
		ps.addf(pp.at("keep"), "%s", fmt.Sprintf("permissions: keep %q differs from approve %q: keeping a stale artifact approves it, so both follow approve's rule (remove keep, or set approve)", p.Keep, approve))
	}
}
