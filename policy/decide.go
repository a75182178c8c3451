package policy

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Outcome is what a policy answers for one write. Outcomes are ordered from
// the loosest to the strictest, and the zero Outcome is none of them.
type Outcome uint8

// The outcomes of a write, the values of a rule's `then`.
const (
	// Allow: the write happens at once.
	Allow Outcome = iota + 1
	// Ask: the write is sealed into a task and waits for the owner.
	Ask
	// Refuse: the write does not happen.
	Refuse
)

// String returns the outcome as a rule's `then` writes it.
func (o Outcome) String() string {
	switch o {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	case Refuse:
		return "refuse"
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// Facts are the values of the conditions one write carries, by condition
// name, as the connector found them in the call: for Mercury's pay_invoice,
// Amounts["amount"], Words["method"] and Words["payee"].
type Facts struct {
	Amounts map[string]Cents    // for AmountRange conditions
	Words   map[string]string   // for AnyOf and Equals conditions
	Names   map[string][]string // for Names conditions (may be empty: none)
}

// Decision is a policy's answer for one write.
type Decision struct {
	Outcome Outcome
	// Rule is the number (from 1) of the rule that decided, or 0 when no
	// rule did: no rule matched, or the matching rule's `then` was looser
	// than what `confirm` says, which then stands.
	Rule int
	// Code is set when the write is refused: "policy_unreadable" (the
	// policy is not OK), "policy_denied" (a rule refuses it) or
	// "internal_error" (the connector asked about something that is not a
	// write, or left out or misnamed a fact the write carries).
	Code string
	// Sentence says why the write is refused; it is safe to show the
	// agent and the owner. It is empty unless Outcome is Refuse.
	Sentence string
}

// Decide answers for one write the connector is about to make, once every
// other check of its own (allowed actions, recipients, maximum amounts) has
// passed. facts must hold a value for each condition op carries. The day's
// count is reserved after Decide: as Direct when it allows the write, as
// Confirmed in the answer run of an approved task.
//
// Two gates the schema may declare come first: a write the Allowed list
// does not name is refused, and so is one whose amount is above one of the
// owner's Caps. Then `confirm` gives the starting answer: Ask for a write it
// names, Allow for any other. Then the rules are read in order, and the first whose `when`
// matches decides, but never more loosely than `confirm`: the outcome is the
// stricter of the two (Refuse over Ask over Allow), so an `allow` rule cannot
// turn an asked write into a direct one. A `when` matches when each of its
// members does: `op` names the write (no `op`: every write), and the write's
// facts meet every condition the rule tests. A rule testing a condition the
// write does not carry does not match it. When no rule matches, `confirm`
// decides.
//
// A policy that is not OK refuses every write with "policy_unreadable" and
// its sentence. Reads are never decided: a connector serves them whatever
// the policy's mode.
//
// The answer run of an approved task decides its sealed write again, with
// the policy as it is then: Ask there is the owner's yes, and the write goes
// ahead; Refuse still refuses it.
func (p *Policy) Decide(op string, facts Facts) Decision {
	if p.mode != OK {
		return refusal(0, "policy_unreadable", p.sentence)
	}
	if !p.ix.writes[op] {
		return refusal(0, "internal_error", fmt.Sprintf("the policy was asked about %s, which is not one of this connector's writes", quote(op)))
	}
	for i := range p.ix.conds {
		if !p.ix.carried(op, i) {
			continue
		}
		if s := p.ix.conds[i].missing(facts); s != "" {
			return refusal(0, "internal_error", fmt.Sprintf("the connector %s for this %s", s, p.ix.noun(op)))
		}
	}
	pl := p.plans[op]
	if pl.refused != nil {
		return *pl.refused
	}
	for i := range pl.steps {
		if st := &pl.steps[i]; st.matches(op, facts, p.ix) {
			return st.decision(op, facts, p)
		}
	}
	return Decision{Outcome: pl.otherwise}
}

// Gate answers what Decide answers for op before it reads any fact: the
// refusal of a policy that is not OK, of an operation that is not a write,
// or of a write the schema's Allowed list does not name; the zero Decision
// when none of these refuses (the write's facts then decide). A connector
// that learns some facts only from the service it writes to (GitHub's
// default branch) asks Gate before it asks the service anything, and
// Decide once it knows them.
func (p *Policy) Gate(op string) Decision {
	if p.mode != OK {
		return refusal(0, "policy_unreadable", p.sentence)
	}
	if !p.ix.writes[op] {
		return refusal(0, "internal_error", fmt.Sprintf("the policy was asked about %s, which is not one of this connector's writes", quote(op)))
	}
	if pl := p.plans[op]; pl.refused != nil {
		return *pl.refused
	}
	return Decision{}
}

// RuleText describes rule n (counting from 1) as a refusal by it does:
// "rule 2 (pay_invoice, amount at least $500.01)"; "" when there is no such
// rule.
func (p *Policy) RuleText(n int) string {
	if n < 1 || n > len(p.rules) {
		return ""
	}
	return fmt.Sprintf("rule %d (%s)", n, p.rules[n-1].describe(p.ix))
}

func refusal(rule int, code, sentence string) Decision {
	return Decision{Outcome: Refuse, Rule: rule, Code: code, Sentence: sentence}
}

// missing says what is wrong with the fact facts hold for c, or "".
func (c *Condition) missing(facts Facts) string {
	switch c.kind {
	case condRange:
		if _, ok := facts.Amounts[c.name]; !ok {
			return "gave no " + c.name
		}
		return ""
	case condNames:
		if _, ok := facts.Names[c.name]; !ok {
			return "gave no " + c.name
		}
		return ""
	}
	w, ok := facts.Words[c.name]
	if !ok {
		return "gave no " + c.name
	}
	if !slices.Contains(c.values, w) {
		return "gave a " + c.name + " its policy does not declare"
	}
	return ""
}

// matches reports whether the rule's `when` matches the write op with facts.
func (r *rule) matches(op string, facts Facts, ix *index) bool {
	if r.ops != nil && !slices.Contains(r.ops, op) {
		return false
	}
	for i := range r.tests {
		t := &r.tests[i]
		if !ix.carried(op, t.cond) {
			return false
		}
		c := &ix.conds[t.cond]
		switch c.kind {
		case condRange:
			a := facts.Amounts[c.name]
			if t.hasMin && a < t.min || t.hasMax && a > t.max {
				return false
			}
			continue
		case condNames:
			if !c.allListed(facts.Names[c.name], t.words) {
				return false
			}
			continue
		}
		if !slices.Contains(t.words, facts.Words[c.name]) {
			return false
		}
	}
	return true
}

// describe writes the rule's `when` briefly for a sentence:
// "pay_invoice, amount at least $500.01, method wire". It quotes only names
// the schema declares and amounts.
func (r *rule) describe(ix *index) string {
	var parts []string
	if r.ops != nil {
		parts = append(parts, orList(r.ops))
	}
	for _, t := range r.tests {
		c := &ix.conds[t.cond]
		switch {
		case c.kind == condNames && len(t.words) == 1:
			parts = append(parts, c.name+" "+quoteName(t.words[0]))
		case c.kind == condNames:
			// Only what the write named may reach the agent, not the
			// owner's other names.
			parts = append(parts, fmt.Sprintf("%s one of %d named", c.name, len(t.words)))
		case c.kind != condRange:
			parts = append(parts, c.name+" "+orList(t.words))
		case t.hasMin && t.hasMax:
			parts = append(parts, fmt.Sprintf("%s from %s to %s", c.name, t.min.dollars(), t.max.dollars()))
		case t.hasMin:
			parts = append(parts, fmt.Sprintf("%s at least %s", c.name, t.min.dollars()))
		default:
			parts = append(parts, fmt.Sprintf("%s at most %s", c.name, t.max.dollars()))
		}
	}
	if len(parts) == 0 {
		return "every write"
	}
	return strings.Join(parts, ", ")
}

// allListed reports whether the write carries at least one name and every
// one of them is listed (ignoring case for a caseless condition).
func (c *Condition) allListed(names, listed []string) bool {
	if len(names) == 0 {
		return false
	}
	for _, n := range names {
		if !slices.ContainsFunc(listed, func(l string) bool { return l == n || c.caseless && strings.EqualFold(l, n) }) {
			return false
		}
	}
	return true
}

// quoteName shows a name the owner listed in a rule: in backticks when it
// is made of plain characters (and "/"), else escaped to ASCII in double
// quotes, so that no control, invisible or reordering character reaches a
// sentence; cut to 100 characters.
func quoteName(s string) string {
	const room = 100
	if s != "" && plain(strings.ReplaceAll(s, "/", "")) {
		if len(s) > room {
			return "`" + s[:room] + "…`"
		}
		return "`" + s + "`"
	}
	q := strconv.QuoteToASCII(s)
	if len(q) > room+2 {
		return q[:room+1] + `..."`
	}
	return q
}
