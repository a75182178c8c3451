package policy

import (
	"fmt"
	"slices"
	"strings"
)

// A plan is what the policy does with one write, worked out once when the
// policy is read: Decide walks it for each call, and Explain writes it out
// for the owner. Both read the same steps, so what the owner is told is what
// is decided.
type plan struct {
	// refused, when set, ends every such write: the write is not in the
	// schema's Allowed list.
	refused *Decision
	// steps are read in order; the first whose test matches decides.
	steps []step
	// otherwise decides when no step matches: Ask for a write `confirm`
	// names, Allow for any other.
	otherwise Outcome
}

// step is one check of a plan: a cap (refuses an amount above the owner's
// maximum) or a rule (its `then`, never looser than `confirm`).
type step struct {
	cap  *Cap  // set for a cap
	rule *rule // set for a rule
	n    int   // the rule's number, from 1
	// outcome is what the step decides when it matches: for a rule, the
	// stricter of its `then` and the plan's otherwise.
	outcome Outcome
	// amount is the owner's maximum, for a cap.
	amount Cents
}

// matches reports whether the step decides the write op with facts.
func (s *step) matches(op string, facts Facts, ix *index) bool {
	if s.cap != nil {
		return facts.Amounts[s.cap.Condition] > s.amount
	}
	return s.rule.matches(op, facts, ix)
}

// everything reports whether the step matches every write of op, so that
// nothing after it is ever read.
func (s *step) everything() bool {
	return s.rule != nil && len(s.rule.tests) == 0
}

// decision is what the step answers for op with facts.
func (s *step) decision(op string, facts Facts, p *Policy) Decision {
	if s.cap != nil {
		return refusal(0, "policy_denied", fmt.Sprintf("the %s of %s is above the owner's %s of %s",
			p.ix.noun(op), facts.Amounts[s.cap.Condition].dollars(), s.cap.Key, s.amount.dollars()))
	}
	switch {
	case s.outcome == Refuse:
		return refusal(s.n, "policy_denied", fmt.Sprintf("the owner's rule %d (%s) refuses this %s", s.n, s.rule.describe(p.ix), p.ix.noun(op)))
	case s.rule.then < s.outcome:
		// The rule is looser than `confirm`, which stands.
		return Decision{Outcome: s.outcome}
	}
	return Decision{Outcome: s.outcome, Rule: s.n}
}

// makePlans works out the plan of every write of an OK policy.
func (p *Policy) makePlans() {
	p.plans = make(map[string]*plan, len(p.ix.writes))
	for op := range p.ix.writes {
		pl := &plan{otherwise: Allow}
		if p.confirm[op] {
			pl.otherwise = Ask
		}
		p.plans[op] = pl
		if p.ix.allowed != "" {
			list, _ := p.List(p.ix.allowed)
			if !slices.Contains(list, op) {
				d := refusal(0, "policy_denied", fmt.Sprintf("the owner's policy does not allow %s (it is not in `%s`)", op, p.ix.allowed))
				pl.refused = &d
				continue
			}
		}
		for i := range p.ix.caps {
			c := &p.ix.caps[i]
			max, set := p.Amount(c.Key)
			if set && slices.Contains(c.Writes, op) {
				pl.steps = append(pl.steps, step{cap: c, amount: max, outcome: Refuse})
			}
		}
		for i := range p.rules {
			r := &p.rules[i]
			if r.ops != nil && !slices.Contains(r.ops, op) || !r.carriedBy(op, p.ix) {
				continue
			}
			s := step{rule: r, n: i + 1, outcome: max(r.then, pl.otherwise)}
			pl.steps = append(pl.steps, s)
			if s.everything() {
				break
			}
		}
	}
}

// carriedBy reports whether op carries every condition the rule tests (a
// rule testing one it does not carry never matches it).
func (r *rule) carriedBy(op string, ix *index) bool {
	for _, t := range r.tests {
		if !ix.carried(op, t.cond) {
			return false
		}
	}
	return true
}

// Explanation says, in the owner's words, what a policy does with each
// write of its connector. It is written from the very steps Decide reads.
type Explanation struct {
	// Mode and Sentence are the policy's (Sentence says why a policy that
	// is not OK refuses every write).
	Mode     Mode
	Sentence string
	// Writes holds one entry per write of the connector, in the order the
	// schema declares them.
	Writes []WriteExplanation
	// Rules holds one sentence per rule, in order: "Rule 2: a payment of
	// at least $500.01 asks you."
	Rules []string
	// Limits holds one sentence per other key the owner set, as the
	// connector declares it ("max_spend_usd_month: $20,000.00").
	Limits []string
	// Approvers is `approvers` when the policy names other accounts (nil
	// otherwise, and for a policy that is not OK).
	Approvers *ApproversExplanation
}

// ApproversExplanation is who approves the writes the policy asks about
// besides the owner (SPEC §13 `approvers`).
type ApproversExplanation struct {
	// Accounts are the approvers besides the owner, in the policy's order.
	Accounts []string
	// Threshold is how many distinct accounts, the owner counting as one,
	// must approve.
	Threshold int
	// Text says it in one sentence, to the owner.
	Text string
}

// WriteExplanation is what the policy does with one write.
type WriteExplanation struct {
	Op   string
	Noun string // "payment"; "write" when the connector names none
	// Always is the outcome of every such write when one outcome is all
	// there is (zero when it depends on what the write carries).
	Always Outcome
	// Cases are read in order when Always is zero: the first that
	// matches decides; Otherwise decides when none does.
	Cases     []Case
	Otherwise Outcome
	// Text is the whole of it as one line for the owner.
	Text string
}

// Case is one step of a write's plan.
type Case struct {
	// Rule is the rule's number (from 1), or 0 for a cap.
	Rule int
	// When says what the write must carry for the case to decide, in
	// words ("the amount is at least $500.01 and the method is wire").
	When    string
	Outcome Outcome
	// Because names where the case comes from: "rule 2", or the key of a
	// cap ("max_payment_usd").
	Because string
}

// Explain writes out what the policy does with each write. Decide reads the
// same plan, so a case claims only what Decide answers.
func (p *Policy) Explain() Explanation {
	e := Explanation{Mode: p.mode, Sentence: p.sentence}
	if p.ix == nil {
		return e
	}
	for _, op := range p.ix.order {
		w := WriteExplanation{Op: op, Noun: p.ix.noun(op)}
		if p.mode != OK {
			w.Always = Refuse
			w.Text = fmt.Sprintf("%s: refused, because the policy cannot be applied (%s).", op, p.sentence)
			e.Writes = append(e.Writes, w)
			continue
		}
		pl := p.plans[op]
		if pl.refused != nil {
			w.Always = Refuse
			w.Text = fmt.Sprintf("%s: refused (it is not in `%s`).", op, p.ix.allowed)
			e.Writes = append(e.Writes, w)
			continue
		}
		w.Otherwise = pl.otherwise
		for i := range pl.steps {
			s := &pl.steps[i]
			c := Case{Rule: s.n, Outcome: s.outcome}
			if s.cap != nil {
				c.When = fmt.Sprintf("the %s is above %s", s.cap.Condition, s.amount.dollars())
				if s.cap.Counted != "" {
					c.When = fmt.Sprintf("the %s, %s, is above %s", s.cap.Condition, s.cap.Counted, s.amount.dollars())
				}
				c.Because = s.cap.Key
			} else {
				c.When = s.rule.when(p.ix)
				c.Because = fmt.Sprintf("rule %d", s.n)
			}
			w.Cases = append(w.Cases, c)
		}
		w.Always = always(pl)
		w.Text = writeText(w, pl)
		e.Writes = append(e.Writes, w)
	}
	if p.mode != OK {
		return e
	}
	for i := range p.rules {
		r := &p.rules[i]
		e.Rules = append(e.Rules, fmt.Sprintf("Rule %d: %s %s.", i+1, r.subject(p.ix), r.then.verb()))
	}
	if len(p.approvers) > 0 {
		who := append([]string{"you"}, p.approvers...)
		e.Approvers = &ApproversExplanation{Accounts: slices.Clone(p.approvers), Threshold: p.threshold,
			Text: fmt.Sprintf("A write that asks waits for %d of %s to approve it (any of them may reject it); an answer you supply, and a notice, stay yours alone.",
				p.threshold, andList(who))}
		if p.threshold == len(who) {
			e.Approvers.Text = fmt.Sprintf("A write that asks waits for each of %s to approve it (any of them may reject it); an answer you supply, and a notice, stay yours alone.", andList(who))
		}
	}
	for _, k := range p.ix.keyOrder {
		if k == p.ix.allowed || p.ix.capKey(k) {
			continue
		}
		if v, ok := p.keys[k]; ok {
			e.Limits = append(e.Limits, k+": "+v.words())
		}
	}
	return e
}

// andList joins words as "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// always is the one outcome of a plan, or zero when it depends on the
// write.
func always(pl *plan) Outcome {
	out := pl.otherwise
	for i, s := range pl.steps {
		if s.everything() {
			// Nothing after it is read.
			if i == 0 {
				return s.outcome
			}
			out = s.outcome
			for _, t := range pl.steps[:i] {
				if t.outcome != out {
					return 0
				}
			}
			return out
		}
		if s.outcome != out {
			return 0
		}
	}
	return out
}

// writeText is a write's plan as one line.
func writeText(w WriteExplanation, pl *plan) string {
	if w.Always != 0 {
		if len(w.Cases) == 0 {
			return fmt.Sprintf("%s: %s.", w.Op, w.Always.verb())
		}
		var why []string
		for _, c := range w.Cases {
			why = append(why, c.Because)
		}
		return fmt.Sprintf("%s: %s (%s).", w.Op, w.Always.verb(), strings.Join(why, ", "))
	}
	var parts []string
	last := false
	for i, c := range w.Cases {
		if pl.steps[i].everything() {
			parts = append(parts, fmt.Sprintf("otherwise %s (%s)", c.Outcome.verb(), c.Because))
			last = true
			break
		}
		parts = append(parts, fmt.Sprintf("%s when %s (%s)", c.Outcome.verb(), c.When, c.Because))
	}
	if !last {
		parts = append(parts, "otherwise "+w.Otherwise.verb())
	}
	return fmt.Sprintf("%s, the first that applies: %s.", w.Op, strings.Join(parts, "; "))
}

// verb says what an outcome does to a write, for a sentence.
func (o Outcome) verb() string {
	switch o {
	case Allow:
		return "runs at once"
	case Ask:
		return "asks you first"
	case Refuse:
		return "refused"
	}
	return o.String()
}

// when writes the rule's conditions for a sentence: "the amount is at
// least $500.01 and the method is wire"; "always" when it tests none.
func (r *rule) when(ix *index) string {
	var parts []string
	for _, t := range r.tests {
		c := &ix.conds[t.cond]
		switch {
		case c.kind == condNames:
			quoted := make([]string, len(t.words))
			for i, w := range t.words {
				quoted[i] = quoteName(w)
			}
			if len(quoted) == 1 {
				parts = append(parts, "the "+c.name+" is "+quoted[0])
			} else {
				parts = append(parts, "every "+c.name+" is one of "+orList(quoted))
			}
		case c.kind != condRange:
			parts = append(parts, "the "+c.name+" is "+orList(t.words))
		case t.hasMin && t.hasMax:
			parts = append(parts, fmt.Sprintf("the %s is from %s to %s", c.name, t.min.dollars(), t.max.dollars()))
		case t.hasMin:
			parts = append(parts, fmt.Sprintf("the %s is at least %s", c.name, t.min.dollars()))
		default:
			parts = append(parts, fmt.Sprintf("the %s is at most %s", c.name, t.max.dollars()))
		}
	}
	if len(parts) == 0 {
		return "always"
	}
	return strings.Join(parts, " and ")
}

// subject writes what the rule applies to: "a pay_invoice where the amount
// is at least $500.01", "every write".
func (r *rule) subject(ix *index) string {
	what := "every write"
	if r.ops != nil {
		what = orList(r.ops)
	}
	if len(r.tests) == 0 {
		return what
	}
	return what + " where " + r.when(ix)
}

// words writes a key's value for the owner.
func (v keyValue) words() string {
	switch v.kind {
	case Count:
		return fmt.Sprint(v.count)
	case Amount:
		return v.amount.dollars()
	case Text:
		return fmt.Sprintf("%q", v.text)
	}
	if len(v.list) == 0 {
		return "none"
	}
	return strings.Join(v.list, ", ")
}
