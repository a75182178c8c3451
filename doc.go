// Package countersign is the domain of the service, a leaf every other
// package shares: the one error type with the contract's refusal codes (SPEC
// §4); the task model — kinds, states, the moves the contract allows (the
// only way a task's state changes) with who makes each, what it drops and
// the outcome class of an end, the task events each state sends (SPEC §3,
// §10); the actors a task's history names; the ids and their rules, one
// rule each (task, run, account, project, device); the envelope (SPEC §8)
// with its canonical bytes, task hash and supply hash; the validation of
// what a task shows (SPEC §12); and the contract's limits as named
// constants.
//
// It imports the standard library only: no package of the project and no
// third-party module (a test enforces it). Storage, HTTP, sealing and the
// connector SDK depend on it, never the other way round. Every refusal is a
// *Error whose sentence names the broken rule and where (fields, values and
// files are numbered from 1), and never quotes task content.
//
// # States
//
// A task changes state only by a Move, and only Transition makes one: the
// store's MoveTask takes nothing else (the zero Move is refused), and every
// write path — the door's approvals, rejections, cancellations and Got it,
// an agent's cancel, the answer run's start and end, the sweep — asks
// Transition for its move. Transition allows the transitions of SPEC §3,
// and nothing else, each by those who make it:
//
//	confirm, input: open → approved | rejected     (the owner, or an approver of a shared task)
//	                open → cancelled               (the owner or the agent)
//	                open → expired | void          (the platform)
//	                approved → answering | failed | void   (the platform)
//	                answering → done | failed      (the platform)
//	notice:         open → done                    (the owner's Got it)
//	                open → cancelled               (the owner or the agent)
//	                open → expired                 (the platform)
//
// CanMove states which (kind, from, to) are allowed. A Move carries what
// goes with it: the failure reason of a move to failed, the outcome class
// of an end, what the move drops (which the store applies) and the task
// event it sends.
//
// Two edges go beyond the diagram of SPEC §3, deliberately:
//
//   - approved → failed: the platform makes its admission checks (the
//     preparer's key, the answer operation exists, is priced 0 and is within
//     its limits, the queue takes the job) while the task is approved, and the
//     30-minute deadline ends a task whose run never began. These end the task
//     failed with preparer_key_unavailable, operation_unknown,
//     operation_priced, operation_limit_reached, queue_unavailable or
//     run_not_started; the platform's own checks of the approval and the
//     sealed copy before the run end it run_refused:confirmation_required
//     or run_refused:task_unreadable. Only run_unfinished is not a reason
//     an approved task fails for.
//   - approved → void: the policy hash and the build are compared with the
//     envelope before the run begins. A task whose run began (answering) is
//     never void, because void tells the agent that nothing was written, and a
//     begun run may have acted; such a task ends done or failed
//     (run_refused:<code> when the connector, re-checking the policy, refuses;
//     run_unfinished when it never reports), for no other reason.
//
// Expiry applies to open tasks only: an approval accepted before expires_at is
// carried out, and the 30-minute deadline bounds it. Only open tasks are
// cancelled or rejected. A refused move out of any state but open is
// task_closed with the state; a refused move out of open (approving or
// rejecting a notice, acknowledging a confirm task) is invalid_request; a
// move by someone who does not make it, or with a failure reason that does
// not fit, is internal_error (a mistake of the service, not of the caller).
//
// The outcome class of a terminal task is claimed when the connector's run
// reported it (done for confirm and input, failed with run_refused:<code>
// once the run began) and observed for everything the platform recorded
// itself, including an owner's rejection, a cancellation, a notice's Got it
// and a run_refused:<code> from the platform's checks before the run.
//
// # Ids
//
// A run id is 16 random bytes written as 26 characters of lowercase Crockford
// base32 (0-9 and a-z without i, l, o and u). A task id is <run id>-<n> with
// n from 1, so it stays within the 80 characters of SPEC §12; ValidTaskID
// accepts anything the contract allows (1–80 of [a-z0-9-]). A device id has a
// run id's form. An account id follows NEAR's rules (CheckAccountID); a project
// name is 1–64 of [a-z0-9._-] beginning with a letter or digit.
//
// # Events
//
// A task reaching a state sends at most one event (EventFor): open
// task_created, approved task_approved, done task_answered (not a notice's
// Got it), failed task_failed, expired task_expired; the other states send
// none.
//
// # Envelope
//
// Canonical writes the members in sorted key order by hand. Strings are
// escaped as encoding/json, JavaScript's JSON.stringify and Python's json
// write them without ASCII or HTML escaping: only the quote, the backslash
// and characters below U+0020 are escaped (\b \f \n \r \t, else \u00xx).
// Invalid UTF-8 and U+2028/U+2029, which those serializers treat differently,
// are refused in every member. Times must be whole seconds in the years 1970
// to 9999 (they are written in UTC; callers truncate, nothing is rounded
// silently). A confirm task supplies none, an input task text or file; both
// carry answer_by and reply_pubkey, a notice neither. The task's life
// (expires_at − created_at) is at most 24 hours (task_life_too_long).
// Members the contract leaves open are held to the forms the service makes:
// owner and preparer are NEAR account ids; project is 1–64 of [a-z0-9._-]
// beginning with a letter or digit; project_uuid is a lowercase UUID; build is
// <connector>@<version> (connector [a-z0-9][a-z0-9_-]*, version of
// [0-9A-Za-z.+-], each at most 64); reply_pubkey must decode to a point on
// P-256. The envelope is at most 256 KiB (task_too_large).
//
// ParseEnvelope is strict (unknown, missing and duplicate members and wrong
// types are refused) and canonical: it refuses any bytes that Canonical would
// not write for the envelope they hold. A client hashes the bytes it
// decrypted, so there is exactly one text per envelope.
//
// SupplyHash takes the sealed bytes; nil stands for nothing sent (null), and
// any other slice is written as a base64 string.
//
// # What a task shows
//
// Lengths count Unicode code points, not bytes, UTF-16 units or grapheme
// clusters (a page counting in JavaScript must count code points). Every
// shown text — the title, labels, values and file names — must be valid
// UTF-8, not empty and not blank. Blank is made only of white space (Unicode
// white space or the braille blank U+2800), combining marks (Mn, Mc, Me)
// and the presentation selectors U+FE0E and U+FE0F: a mark or selector
// draws on the character before it and alone draws nothing, or a dotted
// circle. No shown text may hold:
//
//   - control characters (category Cc), except line feed and tab inside
//     long_text values; carriage return is refused everywhere, so a line
//     break is exactly "\n" and a terminal cannot be made to overwrite a line;
//   - U+2028 and U+2029;
//   - bidirectional controls: U+061C, U+200E, U+200F, U+202A–U+202E,
//     U+2066–U+2069;
//   - zero-width and formatting characters: all of category Cf (zero-width
//     space and joiners, word joiner, BOM, the Mongolian vowel separator,
//     soft hyphen, invisible operators, tag characters, the rarely used
//     visible prepended marks too), every other default-ignorable code point
//     (Hangul fillers, the combining grapheme joiner, Mongolian free variation
//     selectors, reserved ranges) and the variation selectors except U+FE0E
//     and U+FE0F (text and emoji presentation). Emoji joined by U+200D are
//     therefore refused; invisible selectors and tags can carry hidden text;
//   - more than 4 combining marks (Mn, Me, Mc) in a row;
//   - the 66 noncharacters: U+FDD0–U+FDEF and the last two code points of
//     every plane (U+FFFE, U+FFFF, U+1FFFE, … U+10FFFF);
//   - private-use characters (category Co: U+E000–U+F8FF and planes 15 and
//     16): each font draws them its own way (U+F8FF is one vendor's logo and
//     a box elsewhere), so the owner's devices could disagree on what was
//     approved;
//   - code points Unicode leaves unassigned (Cn) in the edition of Go's
//     tables (unicode.Version, 15.0.0 with Go 1.26): no font draws them,
//     and a later edition may give them any meaning. A character newer than
//     the toolchain is refused until the toolchain catches up.
//
// Text is not normalized: it is shown and hashed as given.
//
// A long_text value holds at most 50,000 characters, a text value 500, any
// other value 200; a list has 1 to 20 values, every other kind exactly one. A
// display may have no fields.
//
// Owners download files to every kind of machine, so a file name (at most
// 200 characters) also may not:
//
//   - hold / or \, or a character drawn like them: U+2044 fraction slash,
//     U+2215 division slash, U+2216 set minus, U+2571 and U+2572 box-drawing
//     diagonals, U+244A OCR double backslash, U+29F5 reverse solidus
//     operator, U+29F8 and U+29F9 big solidi, U+FE68 small reverse solidus,
//     U+FF0F and U+FF3C fullwidth solidi, U+1F67C and U+1F67D very heavy
//     solidi;
//   - hold any of < > : " | ? *, which Windows refuses (a colon names a
//     drive, C:evil, or a data stream, a.pdf:hidden);
//   - be a name Windows keeps for a device: CON, PRN, AUX, NUL, CONIN$,
//     CONOUT$, COM0–COM9 and LPT0–LPT9, also COM¹–COM³ and LPT¹–LPT³, in
//     any ASCII case, alone or before a dot (NUL.txt, con.tar.gz), spaces
//     before the dot ignored as Windows ignores them (NUL .txt); com10.txt,
//     console.txt and report.con are names like any other;
//   - begin or end with white space or a dot (so "." and ".." are refused);
//   - equal another name of the task under Unicode simple case folding
//     (strings.EqualFold).
//
// Look-alikes of letters (fullwidth ＣＯＮ, Cyrillic о) are allowed: other
// scripts are written with them, and no system takes them for a device or
// a separator. A content type is type/subtype, each an
// RFC 6838 restricted-name in lowercase, at most 100 characters together,
// without parameters (a charset belongs to the bytes, not to what is shown).
// A file's size may be zero; sizes together are at most 6 MiB
// (task_too_large).
//
// # Limits
//
// The constants Max*, DefaultTaskLife, AnswerRunDeadline, OutcomeKept and
// ApprovalValidity are SPEC §12's table. The 8 KiB bounds of a supply, note
// and rejection reason apply to the sealed bytes the page sends, because the
// part of the service that receives them cannot open them.
package countersign
