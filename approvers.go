package countersign

import (
	"fmt"
	"slices"
)

// MaxApprovers is the most accounts a project's policy may name as
// approvers besides its owner (SPEC §12, §13 `approvers`).
const MaxApprovers = 9

// Approvers is who approves a project's confirm tasks (SPEC §13
// `approvers`): the owner and the accounts the policy names (at most
// MaxApprovers others), of whom Threshold distinct accounts must approve.
// The zero value of Accounts, with Threshold 1, is the owner alone, as every
// project was before approvers.
type Approvers struct {
	Owner string
	// Accounts are the others, in the policy's order, each once, never the
	// owner.
	Accounts []string
	// Threshold is how many distinct accounts, the owner counting as one,
	// must approve: 1 to 1 + len(Accounts).
	Threshold int
}

// OwnerAlone is the rule of a project whose policy names no approvers.
func OwnerAlone(owner string) Approvers { return Approvers{Owner: owner, Threshold: 1} }

// Shared reports whether anyone besides the owner approves: the task is
// then sealed to each approver's devices and listed in their inboxes.
func (a Approvers) Shared() bool { return len(a.Accounts) > 0 }

// Includes reports whether account may approve: the owner or a listed
// account.
func (a Approvers) Includes(account string) bool {
	return account != "" && (account == a.Owner || slices.Contains(a.Accounts, account))
}

// All lists every account that may approve, the owner first.
func (a Approvers) All() []string { return append([]string{a.Owner}, a.Accounts...) }

// Count is how many distinct accounts among approved may approve under
// the rule, leaving out except (the task's preparer, who never approves
// its own task).
func (a Approvers) Count(approved []string, except string) int {
	seen := map[string]bool{}
	for _, acc := range approved {
		if acc != except && a.Includes(acc) {
			seen[acc] = true
		}
	}
	return len(seen)
}

// Check checks the rule as a policy states it: the accounts are NEAR
// account ids, each named once, at most MaxApprovers, none the owner, and
// the threshold is from 1 to 1 + len(Accounts). The sentence names what is
// wrong without quoting more than an account id.
func (a Approvers) Check() error {
	if len(a.Accounts) > MaxApprovers {
		return Errorf(InvalidRequest, "`approvers` names %d accounts; at most %d besides the owner", len(a.Accounts), MaxApprovers)
	}
	for i, acc := range a.Accounts {
		if err := CheckAccountID(acc); err != nil {
			return Errorf(InvalidRequest, "`approvers` account %d is not a NEAR account id: %s", i+1, err.Error())
		}
		if acc == a.Owner {
			return Errorf(InvalidRequest, "`approvers` names the owner, who approves already: list the other accounts")
		}
		if slices.Contains(a.Accounts[:i], acc) {
			return Errorf(InvalidRequest, "`approvers` names %s twice", acc)
		}
	}
	if a.Threshold < 1 || a.Threshold > 1+len(a.Accounts) {
		return Errorf(InvalidRequest, "`approvers`' threshold is %d; it is from 1 to %d (the owner and %d accounts)", a.Threshold, 1+len(a.Accounts), len(a.Accounts))
	}
	return nil
}

// String says the rule in words: "2 of alice.near, bob.near and
// carol.near".
func (a Approvers) String() string {
	all := a.All()
	if len(all) == 1 {
		return all[0]
	}
	return fmt.Sprintf("%d of %s", a.Threshold, andList(all))
}

// andList joins words as "a", "a and b", "a, b and c".
func andList(words []string) string {
	switch len(words) {
	case 0:
		return ""
	case 1:
		return words[0]
	}
	out := ""
	for i, w := range words[:len(words)-1] {
		if i > 0 {
			out += ", "
		}
		out += w
	}
	return out + " and " + words[len(words)-1]
}
