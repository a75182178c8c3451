package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Allowance is what "Always allow this" (SPEC §13) does to a
// policy: the narrow rule built from one write's own values, inserted
// first, and the policy text that holds it.
type Allowance struct {
	// Policy is the new policy text, to put in the project text the owner
	// confirms. It is the old policy written compactly (members in their
	// order, the same values) with the rule first.
	Policy []byte
	// Rule is the rule's JSON text, as Policy holds it first.
	Rule []byte
	// Sentence is the rule as the owner is shown every rule ("Rule 1: a
	// pay_invoice where … runs at once.").
	Sentence string
	// Moved is set when `confirm` named the write: a rule never widens
	// `confirm`, so the write is taken out of it and the rules keep asking
	// about every other such write exactly as `confirm` did (see
	// AlwaysAllow).
	Moved bool
}

// AlwaysAllow builds the rule that allows, from now on, writes like the one
// whose facts are given (SPEC §13): the same operation, and for each
// condition the operation carries the same values (the same method, the
// same payee, the same names: repository, branch, paths, recipients), the
// amount at most this one; `then: "allow"`, inserted first in the policy
// raw (read with s), which must be OK.
//
// A write `confirm` names asks whatever a rule says, so the rule alone
// would change nothing: the write is then taken out of `confirm`, and so
// that every other such write is still asked exactly as before, each rule
// allowing it gets, just before it, a copy limited to that write that asks,
// and a last rule asks about every such write. The policy decides every
// write as before except the ones the new rule allows.
//
// It refuses (with a sentence for the owner) a policy that is not OK, a
// connector without rule conditions, an operation that carries none (the
// rule would allow every such write), a write naming none of a condition's
// names (a payment to a new payee), and a policy the rule would take past
// 50 rules or 64 KiB.
func AlwaysAllow(raw []byte, s Schema, op string, facts Facts) (Allowance, error) {
	p := Parse(raw, s)
	if p.Mode() != OK {
		return Allowance{}, fmt.Errorf("the policy cannot be applied (%s): correct it first", p.Sentence())
	}
	ix := p.ix
	if len(ix.conds) == 0 {
		return Allowance{}, errors.New("this connector's policy takes no rules")
	}
	if !ix.writes[op] {
		return Allowance{}, fmt.Errorf("%s is not one of this connector's writes", quote(op))
	}
	rule, err := allowRule(ix, op, facts)
	if err != nil {
		return Allowance{}, err
	}
	v, err := readJSON(raw)
	if err != nil {
		return Allowance{}, err
	}
	var old []value
	rulesAt := -1
	for i, m := range v.members {
		switch m.name {
		case memberRules:
			old, rulesAt = m.val.items, i
		case memberConfirm:
			if !p.confirm[op] {
				continue
			}
			kept := value{kind: jsonArray, items: []value{}}
			for _, item := range m.val.items {
				if item.text != op {
					kept.items = append(kept.items, item)
				}
			}
			v.members[i].val = kept
		}
	}
	rules := []value{rule}
	for i, r := range old {
		if pr := &p.rules[i]; p.confirm[op] && pr.then == Allow && (pr.ops == nil || slices.Contains(pr.ops, op)) && pr.carriedBy(op, ix) {
			rules = append(rules, askCopy(r, op))
		}
		rules = append(rules, r)
	}
	if p.confirm[op] {
		rules = append(rules, opRule(op, nil, "ask"))
	}
	if len(rules) > MaxRules {
		return Allowance{}, fmt.Errorf("the policy would have %d rules with this one; at most %d are allowed", len(rules), MaxRules)
	}
	list := value{kind: jsonArray, items: rules}
	if rulesAt >= 0 {
		v.members[rulesAt].val = list
	} else {
		v.members = append(v.members, member{name: memberRules, val: list})
	}
	out := v.appendJSON(nil)
	if len(out) > MaxBytes {
		return Allowance{}, fmt.Errorf("the policy would be %d bytes with this rule; at most %d are allowed", len(out), MaxBytes)
	}
	np := Parse(out, s)
	if np.Mode() != OK {
		return Allowance{}, fmt.Errorf("the policy with this rule cannot be applied (%s)", np.Sentence())
	}
	if d := np.Decide(op, facts); d.Outcome != Allow {
		return Allowance{}, fmt.Errorf("the policy with this rule would still %s this %s", d.Outcome.verbShort(), ix.noun(op))
	}
	return Allowance{Policy: out, Rule: rule.appendJSON(nil), Sentence: np.Explain().Rules[0], Moved: p.confirm[op]}, nil
}

// WidenedBy reports whether updated is exactly what AlwaysAllow makes of
// old (read with s) for some write: the policy then decides every write as
// old did, except the writes its first rule allows. A task opened under old
// and approved is still the owner's yes under updated (SPEC §13: "Always
// allow" with Approve in the same step), and the service keeps the hash of
// old as one updated only widens.
func WidenedBy(old, updated []byte, s Schema) bool {
	if bytes.Equal(old, updated) {
		return false
	}
	ix, err := s.index()
	if err != nil {
		return false
	}
	v, err := readJSON(updated)
	if err != nil || v.kind != jsonObject {
		return false
	}
	var first *value
	for _, m := range v.members {
		if m.name == memberRules && m.val.kind == jsonArray && len(m.val.items) > 0 {
			first = &m.val.items[0]
		}
	}
	if first == nil {
		return false
	}
	op, facts, ok := factsOf(ix, *first)
	if !ok {
		return false
	}
	a, err := AlwaysAllow(old, s, op, facts)
	return err == nil && bytes.Equal(a.Policy, updated)
}

// AlwaysAllowWhen is AlwaysAllow for the write a rule's `when` names as
// AlwaysAllow writes it (the JSON object {"op": write, …one value per
// condition the write carries, an amount as its maximum}): what a client
// that read the task's values sends to learn the exact policy text to
// confirm.
func AlwaysAllowWhen(raw []byte, s Schema, when []byte) (Allowance, error) {
	ix, err := s.index()
	if err != nil {
		return Allowance{}, err
	}
	v, err := readJSON(when)
	if err != nil || v.kind != jsonObject {
		return Allowance{}, errors.New("`when` is not a JSON object")
	}
	op, facts, ok := factsOf(ix, value{kind: jsonObject, members: []member{{name: memberWhen, val: v}, {name: memberThen, val: str("allow")}}})
	if !ok {
		return Allowance{}, errors.New("`when` is not {\"op\": a write, and one value of each condition it carries}")
	}
	return AlwaysAllow(raw, s, op, facts)
}

// factsOf reads back the write an allow rule of AlwaysAllow's shape names:
// `op` one write, each condition its one value (an amount its maximum).
func factsOf(ix *index, r value) (string, Facts, bool) {
	facts := Facts{Amounts: map[string]Cents{}, Words: map[string]string{}, Names: map[string][]string{}}
	if r.kind != jsonObject || len(r.members) != 2 || r.members[0].name != memberWhen || r.members[1].name != memberThen ||
		r.members[1].val.text != "allow" || r.members[0].val.kind != jsonObject {
		return "", facts, false
	}
	when := r.members[0].val.members
	if len(when) == 0 || when[0].name != memberOp || when[0].val.kind != jsonString {
		return "", facts, false
	}
	op := when[0].val.text
	for _, m := range when[1:] {
		ci, ok := ix.byMember[m.name]
		if !ok || !ix.carried(op, ci) {
			return "", facts, false
		}
		c := &ix.conds[ci]
		switch c.kind {
		case condRange:
			a, ok := readAmount(m.val)
			if !ok || m.name != c.members[1] {
				return "", facts, false
			}
			facts.Amounts[c.name] = a
		case condAnyOf:
			if m.val.kind != jsonArray || len(m.val.items) != 1 {
				return "", facts, false
			}
			facts.Words[c.name] = m.val.items[0].text
		case condEquals:
			facts.Words[c.name] = m.val.text
		case condNames:
			names, ok := readStrings(m.val)
			if !ok {
				return "", facts, false
			}
			facts.Names[c.name] = names
		}
	}
	return op, facts, true
}

// allowRule is the rule allowing writes like op with facts, `when` naming
// op, then each condition op carries, in the schema's order.
func allowRule(ix *index, op string, facts Facts) (value, error) {
	when := []member{}
	for i := range ix.conds {
		if !ix.carried(op, i) {
			continue
		}
		c := &ix.conds[i]
		if s := c.missing(facts); s != "" {
			return value{}, fmt.Errorf("the write's %s is not known, so no rule can name it", c.name)
		}
		switch c.kind {
		case condRange:
			when = append(when, member{name: c.members[1], val: value{kind: jsonNumber, text: facts.Amounts[c.name].number()}})
		case condAnyOf:
			when = append(when, member{name: c.members[0], val: value{kind: jsonArray, items: []value{str(facts.Words[c.name])}}})
		case condEquals:
			when = append(when, member{name: c.members[0], val: str(facts.Words[c.name])})
		case condNames:
			names := dedupe(facts.Names[c.name])
			if len(names) == 0 {
				return value{}, fmt.Errorf("this %s names no %s, so no rule can name the same", ix.noun(op), c.name)
			}
			list := value{kind: jsonArray}
			for _, n := range names {
				if n == "" || hasControl(n) {
					return value{}, fmt.Errorf("a %s of this %s cannot be written in a rule", c.name, ix.noun(op))
				}
				list.items = append(list.items, str(n))
			}
			when = append(when, member{name: c.members[0], val: list})
		}
	}
	if len(when) == 0 {
		return value{}, fmt.Errorf("%s carries nothing a rule can name, so always allowing it would allow every %s: change the policy instead", op, ix.noun(op))
	}
	return opRule(op, when, "allow"), nil
}

// opRule is {"when": {"op": op, …rest}, "then": then}.
func opRule(op string, rest []member, then string) value {
	when := value{kind: jsonObject, members: append([]member{{name: memberOp, val: str(op)}}, rest...)}
	return value{kind: jsonObject, members: []member{{name: memberWhen, val: when}, {name: memberThen, val: str(then)}}}
}

// askCopy is rule r limited to op, asking: r's conditions with `op` op.
func askCopy(r value, op string) value {
	var rest []member
	for _, m := range r.members {
		if m.name != memberWhen {
			continue
		}
		for _, w := range m.val.members {
			if w.name != memberOp {
				rest = append(rest, w)
			}
		}
	}
	return opRule(op, rest, "ask")
}

func str(s string) value { return value{kind: jsonString, text: s} }

// number writes a non-negative amount as a policy's JSON number: whole
// dollars, or dollars and cents ("120", "120.5", "0.05").
func (c Cents) number() string {
	whole, cents := int64(c)/100, int64(c)%100
	switch {
	case cents == 0:
		return fmt.Sprint(whole)
	case cents%10 == 0:
		return fmt.Sprintf("%d.%d", whole, cents/10)
	}
	return fmt.Sprintf("%d.%02d", whole, cents)
}

// verbShort is an outcome as a verb: "allow", "ask", "refuse".
func (o Outcome) verbShort() string {
	switch o {
	case Ask:
		return "ask"
	case Refuse:
		return "refuse"
	}
	return "allow"
}

// appendJSON writes v compactly: members in their order, strings as JSON
// writes them without HTML escaping, numbers as written.
func (v value) appendJSON(b []byte) []byte {
	switch v.kind {
	case jsonNull:
		return append(b, "null"...)
	case jsonBool, jsonNumber:
		return append(b, v.text...)
	case jsonString:
		return appendString(b, v.text)
	case jsonArray:
		b = append(b, '[')
		for i, item := range v.items {
			if i > 0 {
				b = append(b, ',')
			}
			b = item.appendJSON(b)
		}
		return append(b, ']')
	}
	b = append(b, '{')
	for i, m := range v.members {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, m.name)
		b = append(b, ':')
		b = m.val.appendJSON(b)
	}
	return append(b, '}')
}

func appendString(b []byte, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
}
