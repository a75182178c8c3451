package policy

import (
	"fmt"
	"slices"
)

// Schema is what a connector declares its policy may hold: its operations,
// its own keys, and the conditions its rules may test. It is read, never
// changed, by this package; a connector keeps one for its lifetime.
type Schema struct {
	// Writes names the connector's write operations, e.g. "pay_invoice".
	// Only writes may be named in `confirm` and in a rule's `op`.
	Writes []string
	// Reads names the connector's read operations. They are never decided
	// by a policy; naming them lets a sentence say "a read" when an owner
	// names one where a write belongs.
	Reads []string
	// Keys declares the connector's own policy members besides `confirm`
	// and `rules`, with their shape, e.g. "max_per_day": Count.
	Keys map[string]KeyKind
	// Conditions declares what a rule's `when` may test besides `op`.
	// A policy may hold `rules` only when at least one is declared.
	Conditions []Condition
	// Carries lists, per write, the names of the conditions it carries: a
	// rule may test only what the writes it names carry, and Decide needs
	// a fact for each. A write not listed carries none.
	Carries map[string][]string
	// Nouns names, per write, what a refusal calls one such write
	// ("payment" gives "refuses this payment"). A write not listed is
	// called a "write".
	Nouns map[string]string
	// Allowed names one of Keys, of kind WriteList, that lists the writes
	// allowed at all (GitHub's `actions`): Decide refuses a write it does
	// not list, and a policy without the key allows none. Empty: every
	// write may happen.
	Allowed string
	// Caps are the owner's maximum amounts: Decide refuses a write whose
	// amount is above one before any rule is read.
	Caps []Cap
}

// Cap is a maximum amount the owner sets with one of the schema's Amount
// keys (Mercury's `max_payment_usd`): a write of Writes whose amount, the
// AmountRange condition named Condition, is above the key's value is
// refused. A policy without the key sets no maximum.
type Cap struct {
	Key       string
	Condition string
	Writes    []string
	// Counted, when set, says what the connector adds to the amount when
	// it carries the write out ("with the last 30 days' payments"): the
	// policy refuses an amount above the cap on its own, the connector
	// refuses one that the counted writes take past it, and the policy's
	// explanation names both.
	Counted string
}

// KeyKind is the shape of a connector's own policy key.
type KeyKind uint8

// The shapes a connector's own policy key may have. A key of any other JSON
// shape makes the policy unreadable; so does null.
const (
	// Count is a whole number from 0 to MaxCount (a JSON number without
	// fraction or exponent), read with (*Policy).Count.
	Count KeyKind = iota + 1
	// Amount is an amount in dollars with at most two decimals (a JSON
	// number such as 500 or 499.99), read with (*Policy).Amount.
	Amount
	// Text is a string without control characters, read with
	// (*Policy).Text.
	Text
	// List is a list of non-empty strings without control characters,
	// read with (*Policy).List. An empty list is allowed.
	List
	// WriteList is a list of the connector's write names (as GitHub's
	// `actions`): a name that is not a write makes the policy unreadable,
	// as it does in `confirm`. Read with (*Policy).List.
	WriteList
)

// MaxCount is the largest value a Count key may hold.
const MaxCount = 1_000_000_000

func (k KeyKind) valid() bool { return k >= Count && k <= WriteList }

type conditionKind uint8

const (
	condRange conditionKind = iota + 1
	condAnyOf
	condEquals
	condNames
)

// Condition is something a rule's `when` may test of a write besides its
// operation, declared by the connector with AmountRange, AnyOf, Equals or
// Names. Its name is the name Schema.Carries and Facts use.
type Condition struct {
	name    string
	kind    conditionKind
	members []string // range: min, max; others: the one member
	values  []string // the words a word condition may name
	// caseless: a Names condition compares names ignoring case.
	caseless bool
}

// AmountRange declares an amount condition: the `when` members minMember
// and maxMember (for Mercury, "min_usd" and "max_usd") hold amounts in
// dollars, either or both, and the write's amount (Facts.Amounts[name])
// matches when it lies between them, both bounds included.
func AmountRange(name, minMember, maxMember string) Condition {
	return Condition{name: name, kind: condRange, members: []string{minMember, maxMember}}
}

// AnyOf declares a condition on a word the write carries (Facts.Words[name]):
// the `when` member holds a non-empty list of the given values, and the write
// matches when its word is one of the listed ones. Mercury declares
// AnyOf("method", "methods", "ach", "wire", …).
func AnyOf(name, member string, values ...string) Condition {
	return Condition{name: name, kind: condAnyOf, members: []string{member}, values: slices.Clone(values)}
}

// Equals declares a condition on a word the write carries (Facts.Words[name]):
// the `when` member holds one of the given values, and the write matches when
// its word is that value. Mercury declares Equals("payee", "payee", "saved", "new").
func Equals(name, member string, values ...string) Condition {
	return Condition{name: name, kind: condEquals, members: []string{member}, values: slices.Clone(values)}
}

// Names declares a condition on names the write carries that the connector
// cannot list in advance (Facts.Names[name]: a repository, a branch, the
// paths a commit changes, a message's recipients, a saved payee's id): the
// `when` member holds a non-empty list of names, and the write matches when
// it carries at least one name and every one of them is listed. With
// caseless, names compare ignoring case (as GitHub compares repositories
// and mail its domains). GitHub declares Names("repo", "repos", true).
func Names(name, member string, caseless bool) Condition {
	return Condition{name: name, kind: condNames, members: []string{member}, caseless: caseless}
}

// phrase says what a rule testing the condition does, completing
// "rule N …": "bounds an amount", "names a method".
func (c *Condition) phrase() string {
	verb := "names "
	if c.kind == condRange {
		verb = "bounds "
	}
	article := "a "
	switch c.name[0] {
	case 'a', 'e', 'i', 'o', 'u':
		article = "an "
	}
	return verb + article + c.name
}

// Validate reports the first mistake in the schema's declaration. Parse
// checks the schema too and fails closed: a policy read against a schema that
// does not validate is broken, and every write is refused. Connectors should
// call Validate in a test.
func (s *Schema) Validate() error {
	_, err := s.index()
	return err
}

// index is a schema checked and arranged for lookups.
type index struct {
	writes   map[string]bool
	reads    map[string]bool
	keys     map[string]KeyKind
	conds    []Condition
	byName   map[string]int    // condition name → position in conds
	byMember map[string]int    // `when` member → position in conds
	carries  map[string][]bool // write → which of conds it carries
	nouns    map[string]string
	order    []string // the writes, as declared
	keyOrder []string // the keys, sorted
	allowed  string
	caps     []Cap
}

// capKey reports whether key is the key of a cap.
func (ix *index) capKey(key string) bool {
	for _, c := range ix.caps {
		if c.Key == key {
			return true
		}
	}
	return false
}

// reserved names the members every policy may hold, and the one every rule's
// `when` may hold.
const (
	memberConfirm   = "confirm"
	memberRules     = "rules"
	memberApprovers = "approvers"
	memberAccounts  = "accounts"
	memberThreshold = "threshold"
	memberWhen      = "when"
	memberThen      = "then"
	memberOp        = "op"
)

func (s *Schema) index() (*index, error) {
	ix := &index{
		writes:   make(map[string]bool, len(s.Writes)),
		reads:    make(map[string]bool, len(s.Reads)),
		keys:     make(map[string]KeyKind, len(s.Keys)),
		conds:    slices.Clone(s.Conditions),
		byName:   make(map[string]int, len(s.Conditions)),
		byMember: make(map[string]int, 2*len(s.Conditions)),
		carries:  make(map[string][]bool, len(s.Carries)),
		nouns:    make(map[string]string, len(s.Nouns)),
	}
	for _, w := range s.Writes {
		if !isName(w) {
			return nil, fmt.Errorf("write %q is not an operation name", w)
		}
		if ix.writes[w] {
			return nil, fmt.Errorf("write %q is declared twice", w)
		}
		ix.writes[w] = true
		ix.order = append(ix.order, w)
	}
	for _, r := range s.Reads {
		if !isName(r) {
			return nil, fmt.Errorf("read %q is not an operation name", r)
		}
		if ix.writes[r] || ix.reads[r] {
			return nil, fmt.Errorf("read %q is declared twice", r)
		}
		ix.reads[r] = true
	}
	for k, kind := range s.Keys {
		if !isName(k) || k == memberConfirm || k == memberRules || k == memberApprovers {
			return nil, fmt.Errorf("key %q cannot be a policy key", k)
		}
		if !kind.valid() {
			return nil, fmt.Errorf("key %q has no valid kind", k)
		}
		ix.keys[k] = kind
		ix.keyOrder = append(ix.keyOrder, k)
	}
	slices.Sort(ix.keyOrder)
	for i := range s.Conditions {
		c := &s.Conditions[i]
		if !isName(c.name) {
			return nil, fmt.Errorf("condition %d has no valid name (declare it with AmountRange, AnyOf or Equals)", i+1)
		}
		if _, dup := ix.byName[c.name]; dup {
			return nil, fmt.Errorf("condition %q is declared twice", c.name)
		}
		ix.byName[c.name] = i
		for _, m := range c.members {
			if !isName(m) || m == memberOp {
				return nil, fmt.Errorf("condition %q: %q cannot be a member of `when`", c.name, m)
			}
			if _, dup := ix.byMember[m]; dup {
				return nil, fmt.Errorf("condition %q: member %q is declared twice", c.name, m)
			}
			ix.byMember[m] = i
		}
		if c.kind == condAnyOf || c.kind == condEquals {
			if len(c.values) == 0 {
				return nil, fmt.Errorf("condition %q declares no values", c.name)
			}
			for j, v := range c.values {
				if !isName(v) || slices.Contains(c.values[:j], v) {
					return nil, fmt.Errorf("condition %q: value %q is not a distinct lower-case word", c.name, v)
				}
			}
		}
	}
	for w, names := range s.Carries {
		if !ix.writes[w] {
			return nil, fmt.Errorf("Carries names %q, which is not a declared write", w)
		}
		carried := make([]bool, len(ix.conds))
		for _, n := range names {
			i, ok := ix.byName[n]
			if !ok {
				return nil, fmt.Errorf("Carries: %s carries %q, which is not a declared condition", w, n)
			}
			if carried[i] {
				return nil, fmt.Errorf("Carries: %s carries %q twice", w, n)
			}
			carried[i] = true
		}
		ix.carries[w] = carried
	}
	for w, noun := range s.Nouns {
		if !ix.writes[w] {
			return nil, fmt.Errorf("Nouns names %q, which is not a declared write", w)
		}
		if noun == "" || hasControl(noun) {
			return nil, fmt.Errorf("Nouns: %s has no usable noun", w)
		}
		ix.nouns[w] = noun
	}
	if s.Allowed != "" {
		if ix.keys[s.Allowed] != WriteList {
			return nil, fmt.Errorf("Allowed names %q, which is not a WriteList key", s.Allowed)
		}
		ix.allowed = s.Allowed
	}
	for _, c := range s.Caps {
		if ix.keys[c.Key] != Amount {
			return nil, fmt.Errorf("a cap names %q, which is not an Amount key", c.Key)
		}
		i, ok := ix.byName[c.Condition]
		if !ok || ix.conds[i].kind != condRange {
			return nil, fmt.Errorf("the cap %q names %q, which is not an AmountRange condition", c.Key, c.Condition)
		}
		if hasControl(c.Counted) {
			return nil, fmt.Errorf("the cap %q has a control character in Counted", c.Key)
		}
		if len(c.Writes) == 0 {
			return nil, fmt.Errorf("the cap %q names no write", c.Key)
		}
		for _, w := range c.Writes {
			if !ix.writes[w] || !ix.carried(w, i) {
				return nil, fmt.Errorf("the cap %q names %q, which is not a write carrying %s", c.Key, w, c.Condition)
			}
		}
		ix.caps = append(ix.caps, Cap{Key: c.Key, Condition: c.Condition, Writes: slices.Clone(c.Writes), Counted: c.Counted})
	}
	return ix, nil
}

// carried reports whether write w carries condition i.
func (ix *index) carried(w string, i int) bool {
	c := ix.carries[w]
	return c != nil && c[i]
}

func (ix *index) noun(w string) string {
	if n, ok := ix.nouns[w]; ok {
		return n
	}
	return "write"
}

// isName reports whether s is an operation or member name: 1–64 of
// [a-z0-9_] (SPEC §2's operation names).
func isName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		b := s[i]
		if !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return true
}
