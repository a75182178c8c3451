package approval

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"countersign"
)

// TimeLayout is the only time format sentences (and `valid_until`) use:
// UTC, whole seconds, `YYYY-MM-DDTHH:MM:SSZ`.
const TimeLayout = "2006-01-02T15:04:05Z"

// DeviceKeyPrefix starts a device key: `p256:` + base64url (no padding) of
// the 65-byte uncompressed P-256 point.
const DeviceKeyPrefix = "p256:"

// Limits of the identifiers sentences carry.
const (
	MaxNameLen = 128 // device ids and project names: 1–128 of [A-Za-z0-9._-]
)

const (
	signInPrefix      = "Sign in to Countersign as "
	signInDevice      = ". Device key: "
	signInValid       = ". Valid until "
	confirmPrefix     = "Confirm in Countersign as "
	approvePrefix     = "Approve in Countersign as "
	accountEnd        = ": "
	atPart            = ". At "
	sentenceEnd       = "."
	approveTask       = "task "
	approveSummaryEnd = ". Task "
	approveHash       = " with hash "
	approveSupply     = " and supply "
	deviceKeyPoint    = 65
	deviceKeyEncLen   = 87 // base64url without padding of 65 bytes
)

// FormatTime renders t as a sentence time. It refuses times with a
// fraction of a second and years outside 1970–9999, which the format cannot
// carry faithfully.
func FormatTime(t time.Time) (string, error) {
	t = t.UTC()
	if t.Nanosecond() != 0 {
		return "", refuse(Malformed, "a sentence time is a whole second")
	}
	if y := t.Year(); y < 1970 || y > 9999 {
		return "", refuse(Malformed, "a sentence time is between the years 1970 and 9999")
	}
	return t.Format(TimeLayout), nil
}

// ParseTime parses a sentence time strictly: exactly `YYYY-MM-DDTHH:MM:SSZ`,
// a real calendar time, in UTC.
func ParseTime(s string) (time.Time, error) {
	if len(s) != len(TimeLayout) {
		return time.Time{}, refuse(Malformed, "the time is not YYYY-MM-DDTHH:MM:SSZ")
	}
	t, err := time.Parse(TimeLayout, s)
	if err != nil || t.Format(TimeLayout) != s || t.Year() < 1970 {
		return time.Time{}, refuse(Malformed, "the time is not YYYY-MM-DDTHH:MM:SSZ")
	}
	return t.UTC(), nil
}

// ValidateDeviceKey checks the syntactic form of a device key: `p256:` +
// unpadded base64url of 65 bytes starting with 0x04. Whether the point is on
// the curve is for the sealing side to check.
func ValidateDeviceKey(s string) error {
	if len(s) != len(DeviceKeyPrefix)+deviceKeyEncLen || !strings.HasPrefix(s, DeviceKeyPrefix) {
		return refuse(Malformed, "the device key is not p256: and 65 bytes in base64url")
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(s[len(DeviceKeyPrefix):])
	if err != nil || len(raw) != deviceKeyPoint || raw[0] != 0x04 {
		return refuse(Malformed, "the device key is not p256: and 65 bytes in base64url")
	}
	return nil
}

// SignIn is the sign-in sentence:
//
//	Sign in to Countersign as {account}. Device key: {device key}. Valid until {time}.
type SignIn struct {
	Account    string
	DeviceKey  string
	ValidUntil time.Time
}

// Sentence returns the exact text to sign, after checking every part.
func (s SignIn) Sentence() (string, error) {
	if err := ValidateAccountID(s.Account); err != nil {
		return "", err
	}
	if err := ValidateDeviceKey(s.DeviceKey); err != nil {
		return "", err
	}
	t, err := FormatTime(s.ValidUntil)
	if err != nil {
		return "", err
	}
	return signInPrefix + s.Account + signInDevice + s.DeviceKey + signInValid + t + sentenceEnd, nil
}

// ParseSignIn parses a sign-in sentence. The text must be exactly what
// Sentence would produce for the parts it carries.
func ParseSignIn(text string) (SignIn, error) {
	bad := refuse(Malformed, "the text is not a sign-in sentence")
	rest, ok := strings.CutPrefix(text, signInPrefix)
	if !ok {
		return SignIn{}, bad
	}
	account, rest, ok := strings.Cut(rest, signInDevice)
	if !ok {
		return SignIn{}, bad
	}
	device, rest, ok := strings.Cut(rest, signInValid)
	if !ok {
		return SignIn{}, bad
	}
	when, ok := strings.CutSuffix(rest, sentenceEnd)
	if !ok {
		return SignIn{}, bad
	}
	t, err := ParseTime(when)
	if err != nil {
		return SignIn{}, err
	}
	s := SignIn{Account: account, DeviceKey: device, ValidUntil: t}
	again, err := s.Sentence()
	if err != nil {
		return SignIn{}, err
	}
	if again != text {
		return SignIn{}, bad
	}
	return s, nil
}

// ActionKind names what a confirmation confirms.
type ActionKind uint8

// The confirmation actions of the contract.
const (
	WithdrawDevice ActionKind = iota + 1 // withdraw the device {id}
	NameWebhook                          // name the webhook {sha256hex(url)}
	RemoveWebhook                        // remove the webhook
	SetProject                           // set the project {name} to {sha256hex(project text)}
	RemoveProject                        // remove the project {name}
)

// Action is the action part of a confirmation sentence. Build it with the
// Action… functions; it is comparable, so a parsed action can be compared
// with the expected one.
type Action struct {
	Kind    ActionKind
	Subject string // device id or project name; "" when the action has none
	Hash    string // lowercase hex SHA-256 of the webhook URL or project text; "" when none
}

// ActionWithdrawDevice confirms withdrawing (signing out) device id.
func ActionWithdrawDevice(id string) Action { return Action{Kind: WithdrawDevice, Subject: id} }

// ActionNameWebhook confirms naming url as the webhook; the sentence carries
// the URL's SHA-256, not the URL.
func ActionNameWebhook(url string) Action { return Action{Kind: NameWebhook, Hash: sha256Hex(url)} }

// ActionRemoveWebhook confirms removing the webhook.
func ActionRemoveWebhook() Action { return Action{Kind: RemoveWebhook} }

// ActionSetProject confirms setting project name to projectText (the exact
// JSON text the owner sent); the sentence carries the text's SHA-256.
func ActionSetProject(name, projectText string) Action {
	return Action{Kind: SetProject, Subject: name, Hash: sha256Hex(projectText)}
}

// ActionRemoveProject confirms removing project name.
func ActionRemoveProject(name string) Action { return Action{Kind: RemoveProject, Subject: name} }

// Text returns the action's words, after checking its parts.
func (a Action) Text() (string, error) {
	bad := refuse(Malformed, "the action is not one of the confirmation actions")
	switch a.Kind {
	case WithdrawDevice:
		if !isName(a.Subject) || a.Hash != "" {
			return "", bad
		}
		return "withdraw the device " + a.Subject, nil
	case NameWebhook:
		if a.Subject != "" || !isHash(a.Hash) {
			return "", bad
		}
		return "name the webhook " + a.Hash, nil
	case RemoveWebhook:
		if a.Subject != "" || a.Hash != "" {
			return "", bad
		}
		return "remove the webhook", nil
	case SetProject:
		if !isName(a.Subject) || !isHash(a.Hash) {
			return "", bad
		}
		return "set the project " + a.Subject + " to " + a.Hash, nil
	case RemoveProject:
		if !isName(a.Subject) || a.Hash != "" {
			return "", bad
		}
		return "remove the project " + a.Subject, nil
	}
	return "", bad
}

// ParseAction parses the words of a confirmation action.
func ParseAction(text string) (Action, error) {
	var a Action
	switch {
	case text == "remove the webhook":
		a = ActionRemoveWebhook()
	case strings.HasPrefix(text, "withdraw the device "):
		a = Action{Kind: WithdrawDevice, Subject: text[len("withdraw the device "):]}
	case strings.HasPrefix(text, "name the webhook "):
		a = Action{Kind: NameWebhook, Hash: text[len("name the webhook "):]}
	case strings.HasPrefix(text, "set the project "):
		name, hash, ok := strings.Cut(text[len("set the project "):], " to ")
		if !ok {
			return Action{}, refuse(Malformed, "the action is not one of the confirmation actions")
		}
		a = Action{Kind: SetProject, Subject: name, Hash: hash}
	case strings.HasPrefix(text, "remove the project "):
		a = Action{Kind: RemoveProject, Subject: text[len("remove the project "):]}
	default:
		return Action{}, refuse(Malformed, "the action is not one of the confirmation actions")
	}
	again, err := a.Text()
	if err != nil {
		return Action{}, err
	}
	if again != text {
		return Action{}, refuse(Malformed, "the action is not one of the confirmation actions")
	}
	return a, nil
}

// Confirmation is the confirmation sentence:
//
//	Confirm in Countersign as {account}: {action}. At {time}.
type Confirmation struct {
	Account string
	Action  Action
	At      time.Time
}

// Sentence returns the exact text to sign, after checking every part.
func (c Confirmation) Sentence() (string, error) {
	if err := ValidateAccountID(c.Account); err != nil {
		return "", err
	}
	action, err := c.Action.Text()
	if err != nil {
		return "", err
	}
	t, err := FormatTime(c.At)
	if err != nil {
		return "", err
	}
	return confirmPrefix + c.Account + accountEnd + action + atPart + t + sentenceEnd, nil
}

// ParseConfirmation parses a confirmation sentence strictly.
func ParseConfirmation(text string) (Confirmation, error) {
	bad := refuse(Malformed, "the text is not a confirmation sentence")
	rest, ok := strings.CutPrefix(text, confirmPrefix)
	if !ok {
		return Confirmation{}, bad
	}
	account, rest, ok := strings.Cut(rest, accountEnd)
	if !ok {
		return Confirmation{}, bad
	}
	i := strings.LastIndex(rest, atPart)
	if i < 0 {
		return Confirmation{}, bad
	}
	actionText, when := rest[:i], rest[i+len(atPart):]
	when, ok = strings.CutSuffix(when, sentenceEnd)
	if !ok {
		return Confirmation{}, bad
	}
	if err := ValidateAccountID(account); err != nil {
		return Confirmation{}, err
	}
	action, err := ParseAction(actionText)
	if err != nil {
		return Confirmation{}, err
	}
	t, err := ParseTime(when)
	if err != nil {
		return Confirmation{}, err
	}
	c := Confirmation{Account: account, Action: action, At: t}
	again, err := c.Sentence()
	if err != nil {
		return Confirmation{}, err
	}
	if again != text {
		return Confirmation{}, bad
	}
	return c, nil
}

// Approval is the approval sentence, in one of two forms. With a summary
// (the envelope's display.summary, SPEC §7), the wallet shows what
// approving does:
//
//	Approve in Countersign as {account}: {summary}. Task {id} with hash {task hash} and supply {supply hash}. At {time}.
//
// and without one (a task whose envelope has none):
//
//	Approve in Countersign as {account}: task {id} with hash {task hash} and supply {supply hash}. At {time}.
type Approval struct {
	Account    string
	Summary    string // the envelope's display.summary; "" when it has none
	TaskID     string
	TaskHash   string // lowercase hex SHA-256 of the envelope
	SupplyHash string // lowercase hex SHA-256 of the supply document
	At         time.Time
}

// Sentence returns the exact text to sign, after checking every part.
func (a Approval) Sentence() (string, error) {
	if err := ValidateAccountID(a.Account); err != nil {
		return "", err
	}
	if a.Summary != "" {
		if err := countersign.ValidateSummary(a.Summary); err != nil {
			var ce *countersign.Error
			errors.As(err, &ce)
			return "", refuse(Malformed, ce.Message)
		}
	}
	if !countersign.ValidTaskID(a.TaskID) {
		return "", refuse(Malformed, "the task id is not 1–80 of a-z, 0-9 and -")
	}
	if !isHash(a.TaskHash) || !isHash(a.SupplyHash) {
		return "", refuse(Malformed, "a hash is not 64 lowercase hex characters")
	}
	t, err := FormatTime(a.At)
	if err != nil {
		return "", err
	}
	task := approveTask
	if a.Summary != "" {
		task = a.Summary + approveSummaryEnd
	}
	return approvePrefix + a.Account + accountEnd + task + a.TaskID + approveHash + a.TaskHash +
		approveSupply + a.SupplyHash + atPart + t + sentenceEnd, nil
}

// ParseApproval parses an approval sentence, of either form, strictly.
func ParseApproval(text string) (Approval, error) {
	bad := refuse(Malformed, "the text is not an approval sentence")
	rest, ok := strings.CutPrefix(text, approvePrefix)
	if !ok {
		return Approval{}, bad
	}
	account, rest, ok := strings.Cut(rest, accountEnd)
	if !ok {
		return Approval{}, bad
	}
	// The part after a summary holds ids, hashes and a time only, none of
	// which can hold ". Task ": where it stands, its last one ends the
	// summary (which may itself begin "task "); where it does not, the
	// sentence has no summary.
	var summary string
	if i := strings.LastIndex(rest, approveSummaryEnd); i > 0 {
		summary, rest = rest[:i], rest[i+len(approveSummaryEnd):]
	} else if r, plain := strings.CutPrefix(rest, approveTask); plain {
		rest = r
	} else {
		return Approval{}, bad
	}
	id, rest, ok := strings.Cut(rest, approveHash)
	if !ok {
		return Approval{}, bad
	}
	taskHash, rest, ok := strings.Cut(rest, approveSupply)
	if !ok {
		return Approval{}, bad
	}
	supplyHash, rest, ok := strings.Cut(rest, atPart)
	if !ok {
		return Approval{}, bad
	}
	when, ok := strings.CutSuffix(rest, sentenceEnd)
	if !ok {
		return Approval{}, bad
	}
	t, err := ParseTime(when)
	if err != nil {
		return Approval{}, err
	}
	a := Approval{Account: account, Summary: summary, TaskID: id, TaskHash: taskHash, SupplyHash: supplyHash, At: t}
	again, err := a.Sentence()
	if err != nil {
		return Approval{}, err
	}
	if again != text {
		return Approval{}, bad
	}
	return a, nil
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func isHash(s string) bool { return len(s) == 64 && isLowerHex(s) }

func isName(s string) bool {
	if len(s) == 0 || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') && (c < '0' || c > '9') &&
			c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}
