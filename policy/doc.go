// Package policy reads a project's policy against its connector's schema and
// answers, for each write, whether it happens at once, waits for the owner,
// or is refused (SPEC §13, the policy keys of §14, the 64 KiB limit of §12).
// It also defines the daily counts of writes a connector keeps per owner,
// project, agent and UTC day.
//
// A connector declares a Schema: its writes and reads, its own policy keys
// and their shapes, and the conditions its rules may test (Mercury's amount,
// method, payee and the saved payee's id; GitHub's repository, branch and
// paths; Gmail's recipients and their domains). Parse reads the policy's bytes as stored; it never
// fails, and the Policy it returns is OK, Unreadable or Broken, with a
// sentence for the last two. A connector serves reads whatever the mode; it
// asks Decide about a write only once every other check of its own (allowed
// actions, recipients, maximum amounts) has passed, and reserves the write
// in the day's count with a Counter just before the write happens.
//
// # What a policy holds
//
// A policy is one JSON object of at most 64 KiB. Its members are `confirm`
// (a list of write names), `rules` (only where the schema declares
// conditions; at most 50) and the connector's own keys. Each rule is an
// object with `then` (allow, ask or refuse) and an optional `when`: `op` (a
// write's name, or a non-empty list of them) and the members of the
// conditions the connector declares.
//
// # Choices where the contract is silent
//
// Reading:
//   - The first problem found decides the sentence. The order is: size,
//     UTF-8, JSON syntax (with the byte where it goes wrong, counting from 1),
//     nesting, "is an object", repeated members, then each member in the
//     order written, each rule in order. Only a policy that reads whole is
//     checked for being Broken.
//   - A member repeated in one object is refused however it is spelled in
//     JSON ("confirm" and "conf\u0069rm" are one name) and in whatever case
//     ("confirm" and "CONFIRM" are one name too): names are compared by the
//     service's one rule for JSON bodies, Unicode simple case folding
//     (countersign.MemberKey). A member the policy knows, written in
//     another case ("Confirm", "Min_USD"), is unreadable with a sentence
//     naming the member as it must be written, never applied. Nesting
//     deeper than a policy's own five levels is refused before it is read
//     further.
//   - null is the wrong type everywhere; an absent member is how a policy
//     leaves something unset.
//   - Amounts are JSON numbers written with at most two decimals, without
//     sign or exponent, below 10^15 dollars; they are read exactly, as Cents,
//     never as floating point. Counts are whole numbers from 0 to MaxCount.
//     Text and list entries hold no control characters (a line break in a
//     subject prefix would be a header injection); list entries are not
//     empty; an empty list is a list.
//   - A key of kind WriteList (GitHub's `actions`) names writes as `confirm`
//     does, and a name that is not a write makes the policy unreadable too.
//   - `rules` in the policy of a connector that declares no conditions is
//     unreadable, with its own sentence.
//   - A rule without `when` (or with `when: {}`) matches every write; `then`
//     is required. Repeated names in `op` or in a list of words are harmless.
//   - Word conditions (AnyOf, Equals) declare the words they accept, and a
//     rule naming any other word is unreadable; so a refusal's sentence
//     only ever quotes names the connector declared.
//   - A rule whose `op` names something that is not a write, a rule testing
//     a condition that a write it names does not carry, and a rule whose
//     minimum is above its maximum (it could never match) make the policy
//     Broken. A schema that does not validate makes every policy Broken:
//     the connector's mistake fails closed.
//   - A sentence quotes at most a short excerpt of a name the owner wrote (a
//     member's name, or a write's name in `confirm`, `op` or a write list):
//     in backticks, up to 32 characters, when it is plain ASCII; otherwise
//     escaped to ASCII, up to 40 bytes of escapes. It never quotes the value
//     of a key or of a rule's condition.
//
// Deciding:
//   - What the policy does with each write is worked out once, when it is
//     read, as an ordered plan: the gates, the rules that can match the
//     write, and what happens otherwise. Decide walks the plan for each
//     call, and Explain writes the same plan out for the owner (one line
//     per write, one sentence per rule, the other keys as set), so the
//     owner is never told something the policy does not do.
//   - A schema may declare two gates, decided before any rule: an Allowed
//     key (GitHub's `actions`; a write it does not list is refused, and
//     without the key nothing is allowed) and Caps (Mercury's
//     `max_payment_usd`: an amount above the owner's maximum is refused).
//   - `confirm` gives the starting answer (Ask for a write it names, Allow
//     for others); the first rule that matches decides, but the outcome is
//     the stricter of the two, so a rule never widens the policy. When the
//     rule's answer is the looser one, `confirm` stands and Decision.Rule is
//     0; later rules are not read.
//   - A rule without `op` applies to every write that carries all the
//     conditions it tests; a write lacking one of them does not match it
//     (such a rule is not Broken, since it names no write).
//   - `min_…` and `max_…` bounds are both inclusive: "above $500" is
//     `"min_usd": 500.01`, or a `"max_usd": 500` rule for what may run at
//     once.
//   - A policy that is Broken refuses writes with the code
//     "policy_unreadable", as an Unreadable one does: the contract has no
//     other code for a policy that cannot be applied, and the sentence says
//     which rule is at fault.
//   - A refusal by rule reads "the owner's rule N (<its when, briefly>)
//     refuses this <noun>", the noun declared per write (default "write").
//   - Decide fails closed with "internal_error" when the connector asks about
//     an operation that is not a write, or gives no fact, or an undeclared
//     word, for a condition the write carries.
//   - A policy that is not OK holds nothing: no `confirm`, no keys, no
//     rules. Its Hash still covers its bytes as stored.
//   - A Names condition (a repository, a branch, paths, recipients, a
//     payee's id) matches a write that names at least one and only listed
//     ones: a commit whose every path is listed, a message whose every
//     recipient is. A write naming none (a payment to a new payee) matches
//     no rule testing it. A refusal quotes the owner's name only when the
//     rule lists one (the write's own); otherwise it counts them.
//
// "Always allow this" (AlwaysAllow):
//   - The rule names the write's operation and every condition it
//     carries, each with the write's own value (one method, the payee's
//     id, the names), and the amount as a maximum; it is inserted first.
//     A write carrying no condition is refused: the rule would allow every
//     such write.
//   - A rule never widens `confirm`; when `confirm` names the write, the
//     write is taken out of it, every rule that would allow it gets an
//     asking copy limited to it just before it, and a last rule asks about
//     it, so that nothing else the policy decides changes.
//   - The new text is the old one written compactly. WidenedBy recognises
//     exactly such a text, so the service can keep tasks approved under the
//     old policy (whose hash they name) from being void under the new one.
//
// Counting:
//   - Direct and confirmed writes are two numbers per (owner, project,
//     agent, UTC day), each bounded on its own by the connector's daily
//     limit. A reservation is never given back: a write that was attempted
//     counts whether or not it succeeded, since a failed write may have
//     acted in part. Key.Project is best the project's uuid, so a rename
//     keeps the count.
//   - MemoryCounter never forgets a day; it is for tests and development.
//
// The package imports, of this module, only the domain (the root package,
// itself a leaf), for the rule comparing member names. A Policy never changes after Parse and is safe for
// concurrent use.
package policy
