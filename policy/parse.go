package policy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"countersign"
)

// Mode says whether a policy can be applied. The inbox shows it as
// `policy_mode` beside the policy's sentence.
type Mode string

// The three modes of a policy.
const (
	// OK: the policy is read and applied.
	OK Mode = "ok"
	// Unreadable: the bytes are not a policy of this connector. Every
	// write is refused `policy_unreadable`.
	Unreadable Mode = "unreadable"
	// Broken: a well-formed policy whose rules cannot be applied to this
	// connector's writes. Every write is refused `policy_unreadable`.
	Broken Mode = "broken"
)

// Limits of SPEC §12 and §13.
const (
	// MaxBytes is the largest policy, in bytes as stored.
	MaxBytes = 64 << 10
	// MaxRules is the most rules a policy may hold.
	MaxRules = 50
)

// Policy is a project's policy read against its connector's schema. It never
// changes after Parse and is safe for concurrent use.
type Policy struct {
	mode     Mode
	sentence string
	hash     string
	ix       *index
	confirm  map[string]bool
	keys     map[string]keyValue
	rules    []rule
	plans    map[string]*plan // per write, what Decide reads (OK only)
	// approvers and threshold are `approvers` (SPEC §13): the accounts
	// besides the owner who approve confirm tasks, and how many distinct
	// accounts must; threshold 0 when the policy names none.
	approvers []string
	threshold int
}

// keyValue is the value of one of the connector's own keys; kind says which
// field holds it.
type keyValue struct {
	kind   KeyKind
	count  int
	amount Cents
	text   string
	list   []string
}

// rule is one `{when, then}` of `rules`.
type rule struct {
	ops   []string // nil: every write
	tests []test   // in the order of the schema's conditions
	then  Outcome
}

// test is what a rule's `when` asks of one condition.
type test struct {
	cond           int // position in the schema's conditions
	min, max       Cents
	hasMin, hasMax bool
	words          []string
}

// Parse reads a project's policy, as stored, against the connector's schema.
// It never fails: a policy that cannot be applied comes back Unreadable or
// Broken with a sentence saying why, and refuses every write. The sentence
// names the member and the rule (numbered from 1) and quotes at most a short,
// escaped excerpt of a name the owner wrote.
//
// A schema that does not validate makes every policy Broken.
func Parse(raw []byte, s Schema) *Policy {
	sum := sha256.Sum256(raw)
	p := &Policy{hash: hex.EncodeToString(sum[:])}
	ix, err := s.index()
	if err != nil {
		return p.fail(Broken, "this connector declares its policy wrongly: "+err.Error())
	}
	p.ix = ix
	if sentence := p.read(raw); sentence != "" {
		return p.fail(Unreadable, sentence)
	}
	if sentence := p.check(); sentence != "" {
		return p.fail(Broken, sentence)
	}
	p.mode = OK
	p.makePlans()
	return p
}

// fail keeps only the hash and the schema: a policy that cannot be applied
// holds no confirm list, keys or rules.
func (p *Policy) fail(m Mode, sentence string) *Policy {
	return &Policy{mode: m, sentence: sentence, hash: p.hash, ix: p.ix}
}

// Mode says whether the policy can be applied.
func (p *Policy) Mode() Mode { return p.mode }

// Sentence says why a policy is Unreadable or Broken; it is empty for an OK
// policy. It is safe to show the owner and the agent.
func (p *Policy) Sentence() string { return p.sentence }

// Hash is the lowercase hex SHA-256 of the policy's bytes as stored, whatever
// its mode: the envelope's `policy_hash`.
func (p *Policy) Hash() string { return p.hash }

// Asks reports whether the policy's `confirm` names op ("Ask me before"). A
// policy that is not OK names nothing.
func (p *Policy) Asks(op string) bool { return p.confirm[op] }

// Count returns a Count key, and whether the owner set it. It reports false
// for a key the schema does not declare as Count, and for every key of a
// policy that is not OK.
func (p *Policy) Count(key string) (int, bool) {
	v, ok := p.keys[key]
	if !ok || v.kind != Count {
		return 0, false
	}
	return v.count, true
}

// Amount returns an Amount key, and whether the owner set it, as Count does.
func (p *Policy) Amount(key string) (Cents, bool) {
	v, ok := p.keys[key]
	if !ok || v.kind != Amount {
		return 0, false
	}
	return v.amount, true
}

// Text returns a Text key, and whether the owner set it, as Count does.
func (p *Policy) Text(key string) (string, bool) {
	v, ok := p.keys[key]
	if !ok || v.kind != Text {
		return "", false
	}
	return v.text, true
}

// List returns a copy of a List or WriteList key, and whether the owner set
// it, as Count does. A list set empty is returned as an empty, non-nil slice.
func (p *Policy) List(key string) ([]string, bool) {
	v, ok := p.keys[key]
	if !ok || (v.kind != List && v.kind != WriteList) {
		return nil, false
	}
	return append([]string{}, v.list...), true
}

// read fills the policy from raw, or returns why it cannot.
func (p *Policy) read(raw []byte) string {
	if len(raw) > MaxBytes {
		return fmt.Sprintf("the policy is %d bytes; at most %d are allowed", len(raw), MaxBytes)
	}
	if !utf8.Valid(raw) {
		return "the policy is not valid UTF-8"
	}
	v, err := readJSON(raw)
	if err != nil {
		return err.Error()
	}
	if v.kind != jsonObject {
		return "the policy is not a JSON object"
	}
	if name, other, ok := v.repeated(); ok {
		return fmt.Sprintf("the policy names %s twice%s", quote(name), inCases(other))
	}
	p.confirm = map[string]bool{}
	p.keys = map[string]keyValue{}
	for _, m := range v.members {
		var sentence string
		switch {
		case m.name == memberConfirm:
			sentence = p.readConfirm(m.val)
		case m.name == memberRules && len(p.ix.conds) > 0:
			sentence = p.readRules(m.val)
		case m.name == memberRules:
			sentence = "this connector's policy takes no `rules`"
		case m.name == memberApprovers:
			sentence = p.readApprovers(m.val)
		default:
			kind, ok := p.ix.keys[m.name]
			if !ok {
				known := append([]string{memberConfirm, memberRules, memberApprovers}, slices.Collect(maps.Keys(p.ix.keys))...)
				if own := inAnotherCase(m.name, known...); own != "" {
					return fmt.Sprintf("the policy writes %s in another case", quote(own))
				}
				return fmt.Sprintf("the policy has an unknown member %s", quote(m.name))
			}
			sentence = p.readKey(m.name, kind, m.val)
		}
		if sentence != "" {
			return sentence
		}
	}
	return ""
}

func (p *Policy) readConfirm(v value) string {
	const shape = "`confirm` must be a list of write names"
	if v.kind != jsonArray {
		return shape
	}
	for _, item := range v.items {
		if item.kind != jsonString {
			return shape
		}
		if s := p.notAWrite("`confirm`", item.text); s != "" {
			return s
		}
		p.confirm[item.text] = true
	}
	return ""
}

// readApprovers reads `approvers`: {"accounts": [NEAR account ids], "threshold": k},
// each account once, at most countersign.MaxApprovers of them, k from 1 to
// 1 + the number of accounts. Whether the owner is among them is for the
// one who knows the owner (For; the inbox refuses such a policy).
func (p *Policy) readApprovers(v value) string {
	const shape = "`approvers` must be {\"accounts\": [NEAR account ids], \"threshold\": a number}"
	if v.kind != jsonObject {
		return shape
	}
	if name, other, ok := v.repeated(); ok {
		return fmt.Sprintf("`approvers` names %s twice%s", quote(name), inCases(other))
	}
	var accounts []string
	threshold, haveAccounts, haveThreshold := 0, false, false
	for _, m := range v.members {
		switch m.name {
		case memberAccounts:
			list, ok := readStrings(m.val)
			if !ok {
				return "`approvers`' `accounts` must be a list of NEAR account ids"
			}
			accounts, haveAccounts = list, true
		case memberThreshold:
			n, ok := readCount(m.val)
			if !ok {
				return "`approvers`' `threshold` must be a whole number"
			}
			threshold, haveThreshold = n, true
		default:
			if own := inAnotherCase(m.name, memberAccounts, memberThreshold); own != "" {
				return fmt.Sprintf("`approvers` writes %s in another case", quote(own))
			}
			return fmt.Sprintf("`approvers` has an unknown member %s", quote(m.name))
		}
	}
	if !haveAccounts || !haveThreshold {
		return shape
	}
	if err := (countersign.Approvers{Accounts: accounts, Threshold: threshold}).Check(); err != nil {
		return countersign.ErrorMessage(err)
	}
	p.approvers, p.threshold = accounts, threshold
	return ""
}

// For is who approves the confirm tasks of a project of owner under the
// policy (SPEC §13 `approvers`): the owner alone when the policy names no
// approvers or is not OK. A policy that lists the owner among its
// approvers (which the inbox refuses) counts the owner once and keeps its
// threshold, so it never asks fewer accounts than it says.
func (p *Policy) For(owner string) countersign.Approvers {
	if p.mode != OK || p.threshold == 0 {
		return countersign.OwnerAlone(owner)
	}
	a := countersign.Approvers{Owner: owner, Threshold: p.threshold}
	for _, acc := range p.approvers {
		if acc != owner {
			a.Accounts = append(a.Accounts, acc)
		}
	}
	return a
}

// notAWrite says why name, found where `where` says, is not one of the
// connector's writes, or returns "" when it is one.
func (p *Policy) notAWrite(where, name string) string {
	switch {
	case p.ix.writes[name]:
		return ""
	case p.ix.reads[name]:
		return fmt.Sprintf("%s names %s, a read: only writes belong there", where, quote(name))
	default:
		return fmt.Sprintf("%s names %s, which is not one of this connector's writes", where, quote(name))
	}
}

func (p *Policy) readKey(name string, kind KeyKind, v value) string {
	kv := keyValue{kind: kind}
	switch kind {
	case Count:
		n, ok := readCount(v)
		if !ok {
			return fmt.Sprintf("`%s` must be a whole number from 0 to %d", name, MaxCount)
		}
		kv.count = n
	case Amount:
		c, ok := readAmount(v)
		if !ok {
			return fmt.Sprintf("`%s` must be %s", name, amountShape)
		}
		kv.amount = c
	case Text:
		if v.kind != jsonString || hasControl(v.text) {
			return fmt.Sprintf("`%s` must be a string without control characters", name)
		}
		kv.text = v.text
	case List, WriteList:
		list, ok := readStrings(v)
		if !ok {
			return fmt.Sprintf("`%s` must be a list of non-empty strings without control characters", name)
		}
		if kind == WriteList {
			for _, w := range list {
				if s := p.notAWrite("`"+name+"`", w); s != "" {
					return s
				}
			}
		}
		kv.list = list
	}
	p.keys[name] = kv
	return ""
}

const amountShape = "an amount in dollars with at most two decimals, such as 500 or 499.99"

// readCount reads a whole number from 0 to MaxCount, written without sign,
// fraction or exponent.
func readCount(v value) (int, bool) {
	if v.kind != jsonNumber || len(v.text) > 10 {
		return 0, false
	}
	n := 0
	for i := 0; i < len(v.text); i++ {
		b := v.text[i]
		if b < '0' || b > '9' {
			return 0, false
		}
		n = n*10 + int(b-'0')
	}
	return n, n <= MaxCount
}

func readAmount(v value) (Cents, bool) {
	if v.kind != jsonNumber {
		return 0, false
	}
	c, err := ParseCents(v.text)
	return c, err == nil
}

// readStrings reads a list of non-empty strings without control characters;
// an empty list gives an empty, non-nil slice.
func readStrings(v value) ([]string, bool) {
	if v.kind != jsonArray {
		return nil, false
	}
	list := make([]string, 0, len(v.items))
	for _, item := range v.items {
		if item.kind != jsonString || item.text == "" || hasControl(item.text) {
			return nil, false
		}
		list = append(list, item.text)
	}
	return list, true
}

func (p *Policy) readRules(v value) string {
	if v.kind != jsonArray {
		return "`rules` must be a list of rules"
	}
	if len(v.items) > MaxRules {
		return fmt.Sprintf("the policy has %d rules; at most %d are allowed", len(v.items), MaxRules)
	}
	p.rules = make([]rule, 0, len(v.items))
	for i, item := range v.items {
		r, sentence := p.readRule(i+1, item)
		if sentence != "" {
			return sentence
		}
		p.rules = append(p.rules, r)
	}
	return ""
}

func (p *Policy) readRule(n int, v value) (rule, string) {
	var r rule
	if v.kind != jsonObject {
		return r, fmt.Sprintf("rule %d must be an object with `when` and `then`", n)
	}
	if name, other, ok := v.repeated(); ok {
		return r, fmt.Sprintf("rule %d names %s twice%s", n, quote(name), inCases(other))
	}
	for _, m := range v.members {
		switch m.name {
		case memberThen:
			then, ok := parseOutcome(m.val)
			if !ok {
				return r, fmt.Sprintf("rule %d's `then` must be allow, ask or refuse", n)
			}
			r.then = then
		case memberWhen:
			if s := p.readWhen(n, m.val, &r); s != "" {
				return r, s
			}
		default:
			if own := inAnotherCase(m.name, memberThen, memberWhen); own != "" {
				return r, fmt.Sprintf("rule %d writes %s in another case", n, quote(own))
			}
			return r, fmt.Sprintf("rule %d has an unknown member %s", n, quote(m.name))
		}
	}
	if r.then == 0 {
		return r, fmt.Sprintf("rule %d has no `then`", n)
	}
	return r, ""
}

func parseOutcome(v value) (Outcome, bool) {
	if v.kind != jsonString {
		return 0, false
	}
	switch v.text {
	case "allow":
		return Allow, true
	case "ask":
		return Ask, true
	case "refuse":
		return Refuse, true
	}
	return 0, false
}

func (p *Policy) readWhen(n int, v value, r *rule) string {
	if v.kind != jsonObject {
		return fmt.Sprintf("rule %d's `when` must be an object", n)
	}
	if name, other, ok := v.repeated(); ok {
		return fmt.Sprintf("rule %d's `when` names %s twice%s", n, quote(name), inCases(other))
	}
	tests := make(map[int]*test)
	for _, m := range v.members {
		if m.name == memberOp {
			ops, ok := readOps(m.val)
			if !ok {
				return fmt.Sprintf("rule %d's `op` must be a write's name or a non-empty list of them", n)
			}
			r.ops = ops
			continue
		}
		ci, ok := p.ix.byMember[m.name]
		if !ok {
			known := append([]string{memberOp}, slices.Collect(maps.Keys(p.ix.byMember))...)
			if own := inAnotherCase(m.name, known...); own != "" {
				return fmt.Sprintf("rule %d's `when` writes %s in another case", n, quote(own))
			}
			return fmt.Sprintf("rule %d's `when` has an unknown member %s", n, quote(m.name))
		}
		c := &p.ix.conds[ci]
		t := tests[ci]
		if t == nil {
			t = &test{cond: ci}
			tests[ci] = t
		}
		switch c.kind {
		case condRange:
			a, ok := readAmount(m.val)
			if !ok {
				return fmt.Sprintf("rule %d's `%s` must be %s", n, m.name, amountShape)
			}
			if m.name == c.members[0] {
				t.min, t.hasMin = a, true
			} else {
				t.max, t.hasMax = a, true
			}
		case condAnyOf:
			words, ok := readStrings(m.val)
			if !ok || len(words) == 0 || !allIn(words, c.values) {
				return fmt.Sprintf("rule %d's `%s` must be a non-empty list of %s", n, m.name, orList(c.values))
			}
			t.words = dedupe(words)
		case condEquals:
			if m.val.kind != jsonString || !slices.Contains(c.values, m.val.text) {
				return fmt.Sprintf("rule %d's `%s` must be %s", n, m.name, orList(c.values))
			}
			t.words = []string{m.val.text}
		case condNames:
			names, ok := readStrings(m.val)
			if !ok || len(names) == 0 {
				return fmt.Sprintf("rule %d's `%s` must be a non-empty list of names without control characters", n, m.name)
			}
			t.words = dedupe(names)
		}
	}
	for ci := range p.ix.conds {
		if t := tests[ci]; t != nil {
			r.tests = append(r.tests, *t)
		}
	}
	return ""
}

// readOps reads `op`: one name, or a non-empty list of names.
func readOps(v value) ([]string, bool) {
	if v.kind == jsonString {
		return []string{v.text}, true
	}
	ops, ok := readStrings(v)
	if !ok || len(ops) == 0 {
		return nil, false
	}
	return dedupe(ops), true
}

// check returns why a readable policy cannot be applied to the connector's
// writes, or "".
func (p *Policy) check() string {
	for i := range p.rules {
		r, n := &p.rules[i], i+1
		for _, op := range r.ops {
			if s := p.notAWrite(fmt.Sprintf("rule %d's `op`", n), op); s != "" {
				return s
			}
		}
		for _, t := range r.tests {
			c := &p.ix.conds[t.cond]
			if t.hasMin && t.hasMax && t.min > t.max {
				return fmt.Sprintf("rule %d's `%s` is above its `%s`, so it never matches", n, c.members[0], c.members[1])
			}
			for _, op := range r.ops {
				if !p.ix.carried(op, t.cond) {
					return fmt.Sprintf("rule %d %s, and %s carries none", n, c.phrase(), op)
				}
			}
		}
	}
	return ""
}

// inCases is what a sentence about a repeated member adds when the two
// spellings differ.
func inCases(other bool) string {
	if other {
		return ", in two cases (names are compared ignoring case)"
	}
	return ""
}

// quote shows a name the owner wrote, briefly: in backticks, cut to 32
// characters, when it is made of plain characters; otherwise in double
// quotes, escaped to ASCII and cut to 40 bytes of escapes, so that no
// control, invisible or reordering character reaches a sentence.
func quote(s string) string {
	const plainRoom, escapedRoom = 32, 40
	if s != "" && plain(s) {
		if len(s) > plainRoom {
			return "`" + s[:plainRoom] + "…`"
		}
		return "`" + s + "`"
	}
	q := strconv.QuoteToASCII(s)
	if len(q)-2 <= escapedRoom {
		return q
	}
	// The longest prefix, cut between characters, whose escapes fit.
	cut := 0
	for i := range s {
		if len(strconv.QuoteToASCII(s[:i]))-2 > escapedRoom {
			break
		}
		cut = i
	}
	q = strconv.QuoteToASCII(s[:cut])
	return q[:len(q)-1] + `..."`
}

// plain reports whether s holds only characters that read the same
// anywhere: ASCII letters, digits and a few marks.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("_-.:@+", b) >= 0) {
			return false
		}
	}
	return true
}

// hasControl reports whether s holds a control character (C0, DEL or C1).
func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0
}

func allIn(words, values []string) bool {
	for _, w := range words {
		if !slices.Contains(values, w) {
			return false
		}
	}
	return true
}

// dedupe returns list without repetitions, in first-seen order.
func dedupe(list []string) []string {
	seen := make(map[string]bool, len(list))
	out := make([]string, 0, len(list))
	for _, s := range list {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// orList joins words as a sentence lists alternatives: "a", "a or b",
// "a, b or c".
func orList(words []string) string {
	if len(words) <= 1 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}
