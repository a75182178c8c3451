package countersign

import (
	"bytes"
	"crypto/ecdh"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// EnvelopeVersion is the envelope's "v".
const EnvelopeVersion = 1

// Envelope is the canonical document describing a task (SPEC §8). Its exact
// bytes, from Canonical, are what the owner's approval signs by hash.
type Envelope struct {
	// AnswerBy names the operation that answers the task; nil for a notice.
	AnswerBy  *AnswerBy
	Build     string // <connector>@<version>
	CreatedAt time.Time
	Display   Display
	ExpiresAt time.Time
	Files     []File
	ID        string
	Kind      Kind
	Owner     string
	// PolicyHash is the lowercase hex SHA-256 of the project's policy bytes
	// as stored.
	PolicyHash  string
	Preparer    string
	Project     string
	ProjectUUID string
	// ReplyPubkey is the task's reply key, "p256:" + base64url of the
	// uncompressed point; empty for a notice.
	ReplyPubkey string
	// StateHash is the lowercase hex SHA-256 of the sealed state bytes.
	StateHash string
	Thread    string
}

// AnswerBy names a task's answer operation and what the owner supplies to it.
type AnswerBy struct {
	Operation string
	Supplies  Supplies
}

// TaskHash returns the task hash of an envelope's exact bytes: lowercase hex
// SHA-256.
func TaskHash(envelope []byte) string {
	sum := sha256.Sum256(envelope)
	return hex.EncodeToString(sum[:])
}

// SupplyHash returns the supply hash of an approval (SPEC §8): the lowercase
// hex SHA-256 of {"note":N,"supplied":S}, where N and S are JSON strings of
// the standard base64 of the sealed bytes the page sent. A nil slice stands
// for nothing sent (null); any other slice, even an empty one, is a string.
func SupplyHash(note, supplied []byte) string {
	b := make([]byte, 0, 32+base64.StdEncoding.EncodedLen(len(note)+len(supplied)))
	b = append(b, `{"note":`...)
	b = appendBase64OrNull(b, note)
	b = append(b, `,"supplied":`...)
	b = appendBase64OrNull(b, supplied)
	b = append(b, '}')
	return TaskHash(b)
}

func appendBase64OrNull(b, v []byte) []byte {
	if v == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = base64.StdEncoding.AppendEncode(b, v)
	return append(b, '"')
}

// Validate checks every member of the envelope: the display and files by
// ValidateDisplay and ValidateFiles (display_invalid, task_too_large), the
// task's life (task_life_too_long), and the form of every other member
// (invalid_request), including that answer_by and reply_pubkey are present
// exactly when the kind asks something.
func (e *Envelope) Validate() error {
	if !e.Kind.Valid() {
		return malformed("kind is not one of confirm, input and notice")
	}
	if e.Kind.Asks() {
		if e.AnswerBy == nil {
			return malformed("answer_by is missing for a task that asks")
		}
		if !validOperation(e.AnswerBy.Operation) {
			return malformed("answer_by operation is not 1 to 64 of a-z, 0-9 and _")
		}
		if !e.AnswerBy.Supplies.fits(e.Kind) {
			return malformed("answer_by supplies does not fit the kind (confirm: none; input: text or file)")
		}
		if !validReplyPubkey(e.ReplyPubkey) {
			return malformed("reply_pubkey is not p256: and the base64url of an uncompressed P-256 point")
		}
	} else {
		if e.AnswerBy != nil {
			return malformed("a notice names no answer_by")
		}
		if e.ReplyPubkey != "" {
			return malformed("a notice has no reply_pubkey")
		}
	}
	if !validBuild(e.Build) {
		return malformed("build is not <connector>@<version>")
	}
	if err := checkTime(e.CreatedAt, "created_at"); err != nil {
		return err
	}
	if err := checkTime(e.ExpiresAt, "expires_at"); err != nil {
		return err
	}
	if !e.ExpiresAt.After(e.CreatedAt) {
		return malformed("expires_at is not after created_at")
	}
	if e.ExpiresAt.Sub(e.CreatedAt) > MaxTaskLife {
		return Errorf(TaskLifeTooLong, "a task lives at most %d hours", int(MaxTaskLife/time.Hour))
	}
	if !ValidTaskID(e.ID) {
		return malformed("id is not 1 to 80 of a-z, 0-9 and -")
	}
	if !ValidTaskID(e.Thread) {
		return malformed("thread is not 1 to 80 of a-z, 0-9 and -")
	}
	if CheckAccountID(e.Owner) != nil {
		return malformed("owner is not a NEAR account id")
	}
	if CheckAccountID(e.Preparer) != nil {
		return malformed("preparer is not a NEAR account id")
	}
	if !ValidProjectName(e.Project) {
		return malformed("project is not 1 to 64 of a-z, 0-9, ., _ and -, beginning with a letter or digit")
	}
	if !ValidUUID(e.ProjectUUID) {
		return malformed("project_uuid is not a lowercase UUID")
	}
	if !validHexSHA256(e.PolicyHash) {
		return malformed("policy_hash is not 64 lowercase hex digits")
	}
	if !validHexSHA256(e.StateHash) {
		return malformed("state_hash is not 64 lowercase hex digits")
	}
	if err := ValidateDisplay(e.Display); err != nil {
		return err
	}
	return ValidateFiles(e.Files)
}

// Canonical validates the envelope and returns its canonical bytes: members
// sorted by key at every level, no insignificant white space, no HTML
// escaping, UTF-8, "v": 1, "files" always an array, times in TimeFormat.
// Envelopes over MaxEnvelopeBytes are refused task_too_large.
func (e *Envelope) Canonical() ([]byte, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	b, err := e.encode()
	if err != nil {
		return nil, err
	}
	if len(b) > MaxEnvelopeBytes {
		return nil, Errorf(TaskTooLarge, "the envelope is larger than %d bytes", MaxEnvelopeBytes)
	}
	return b, nil
}

// encode writes the members in sorted key order. Every string goes through
// appendString, which refuses what a plain serializer would not write as is.
func (e *Envelope) encode() ([]byte, error) {
	w := &jsonWriter{b: make([]byte, 0, 1024)}
	w.raw(`{`)
	if e.AnswerBy != nil {
		w.raw(`"answer_by":{"operation":`)
		w.str(e.AnswerBy.Operation)
		w.raw(`,"supplies":`)
		w.str(string(e.AnswerBy.Supplies))
		w.raw(`},`)
	}
	w.raw(`"build":`)
	w.str(e.Build)
	w.raw(`,"created_at":`)
	w.str(e.CreatedAt.UTC().Format(TimeFormat))
	w.raw(`,"display":{"fields":[`)
	for i, f := range e.Display.Fields {
		if i > 0 {
			w.raw(`,`)
		}
		w.raw(`{"kind":`)
		w.str(string(f.Kind))
		w.raw(`,"label":`)
		w.str(f.Label)
		w.raw(`,"values":[`)
		for j, v := range f.Values {
			if j > 0 {
				w.raw(`,`)
			}
			w.str(v)
		}
		w.raw(`],"written_by":`)
		w.str(string(f.WrittenBy))
		w.raw(`}`)
	}
	w.raw(`]`)
	if e.Display.Summary != "" {
		w.raw(`,"summary":`)
		w.str(e.Display.Summary)
	}
	w.raw(`,"title":`)
	w.str(e.Display.Title)
	w.raw(`},"expires_at":`)
	w.str(e.ExpiresAt.UTC().Format(TimeFormat))
	w.raw(`,"files":[`)
	for i, f := range e.Files {
		if i > 0 {
			w.raw(`,`)
		}
		w.raw(`{"content_type":`)
		w.str(f.ContentType)
		w.raw(`,"name":`)
		w.str(f.Name)
		w.raw(`,"sha256":`)
		w.str(f.SHA256)
		w.raw(`,"size":`)
		w.b = strconv.AppendInt(w.b, f.Size, 10)
		w.raw(`}`)
	}
	w.raw(`],"id":`)
	w.str(e.ID)
	w.raw(`,"kind":`)
	w.str(string(e.Kind))
	w.raw(`,"owner":`)
	w.str(e.Owner)
	w.raw(`,"policy_hash":`)
	w.str(e.PolicyHash)
	w.raw(`,"preparer":`)
	w.str(e.Preparer)
	w.raw(`,"project":`)
	w.str(e.Project)
	w.raw(`,"project_uuid":`)
	w.str(e.ProjectUUID)
	if e.ReplyPubkey != "" {
		w.raw(`,"reply_pubkey":`)
		w.str(e.ReplyPubkey)
	}
	w.raw(`,"state_hash":`)
	w.str(e.StateHash)
	w.raw(`,"thread":`)
	w.str(e.Thread)
	w.raw(`,"v":`)
	w.b = strconv.AppendInt(w.b, EnvelopeVersion, 10)
	w.raw(`}`)
	if w.err != nil {
		return nil, w.err
	}
	return w.b, nil
}

type jsonWriter struct {
	b   []byte
	err error
}

func (w *jsonWriter) raw(s string) { w.b = append(w.b, s...) }

// str writes s as a JSON string the way a plain serializer does: quote and
// backslash escaped, control characters as \b \f \n \r \t or \u00xx, all else
// as is (no HTML escaping). Invalid UTF-8 and U+2028/U+2029, which common
// serializers replace or escape differently, are refused.
func (w *jsonWriter) str(s string) {
	if w.err != nil {
		return
	}
	if !utf8.ValidString(s) {
		w.err = malformed("a member is not valid UTF-8")
		return
	}
	if strings.ContainsAny(s, "\u2028\u2029") {
		w.err = malformed("a member holds a line or paragraph separator")
		return
	}
	const hexDigits = "0123456789abcdef"
	w.b = append(w.b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		w.b = append(w.b, s[start:i]...)
		switch c {
		case '"', '\\':
			w.b = append(w.b, '\\', c)
		case '\b':
			w.b = append(w.b, '\\', 'b')
		case '\f':
			w.b = append(w.b, '\\', 'f')
		case '\n':
			w.b = append(w.b, '\\', 'n')
		case '\r':
			w.b = append(w.b, '\\', 'r')
		case '\t':
			w.b = append(w.b, '\\', 't')
		default:
			w.b = append(w.b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	w.b = append(w.b, s[start:]...)
	w.b = append(w.b, '"')
}

// ParseEnvelope reads an envelope strictly and canonically: unknown, missing
// and duplicate members, wrong JSON types and invalid member values are
// refused, and so are bytes that are not exactly what Canonical writes for
// the envelope they hold (white space, member order, escapes, number forms).
// A reader hashes the bytes it was given, so what it shows must be what those
// bytes say, with one reading only. Refusals are invalid_request, or the
// code Validate gives.
func ParseEnvelope(b []byte) (Envelope, error) {
	if len(b) > MaxEnvelopeBytes {
		return Envelope{}, Errorf(TaskTooLarge, "the envelope is larger than %d bytes", MaxEnvelopeBytes)
	}
	if !utf8.Valid(b) {
		return Envelope{}, malformed("it is not valid UTF-8")
	}
	e, err := decodeEnvelope(b)
	if err != nil {
		return Envelope{}, err
	}
	canonical, err := e.Canonical()
	if err != nil {
		return Envelope{}, err
	}
	if !bytes.Equal(canonical, b) {
		return Envelope{}, malformed("it is not in canonical form")
	}
	return e, nil
}

func decodeEnvelope(b []byte) (Envelope, error) {
	var e Envelope
	m, err := members(b, "the envelope", []string{
		"build", "created_at", "display", "expires_at", "files", "id", "kind", "owner",
		"policy_hash", "preparer", "project", "project_uuid", "state_hash", "thread", "v",
	}, "answer_by", "reply_pubkey")
	if err != nil {
		return e, err
	}
	if v, err := decodeInt(m["v"], "v"); err != nil {
		return e, err
	} else if v != EnvelopeVersion {
		return e, malformed("v is not 1")
	}
	if raw, ok := m["answer_by"]; ok {
		ab, err := members(raw, "answer_by", []string{"operation", "supplies"})
		if err != nil {
			return e, err
		}
		e.AnswerBy = &AnswerBy{}
		if e.AnswerBy.Operation, err = decodeString(ab["operation"], "answer_by operation"); err != nil {
			return e, err
		}
		s, err := decodeString(ab["supplies"], "answer_by supplies")
		if err != nil {
			return e, err
		}
		e.AnswerBy.Supplies = Supplies(s)
	}
	if raw, ok := m["reply_pubkey"]; ok {
		if e.ReplyPubkey, err = decodeString(raw, "reply_pubkey"); err != nil {
			return e, err
		}
		if e.ReplyPubkey == "" {
			return e, malformed("reply_pubkey is empty")
		}
	}
	strs := []struct {
		name string
		dst  *string
	}{
		{"build", &e.Build}, {"id", &e.ID}, {"owner", &e.Owner},
		{"policy_hash", &e.PolicyHash}, {"preparer", &e.Preparer}, {"project", &e.Project},
		{"project_uuid", &e.ProjectUUID}, {"state_hash", &e.StateHash}, {"thread", &e.Thread},
	}
	for _, s := range strs {
		if *s.dst, err = decodeString(m[s.name], s.name); err != nil {
			return e, err
		}
	}
	kind, err := decodeString(m["kind"], "kind")
	if err != nil {
		return e, err
	}
	e.Kind = Kind(kind)
	if e.CreatedAt, err = decodeTime(m["created_at"], "created_at"); err != nil {
		return e, err
	}
	if e.ExpiresAt, err = decodeTime(m["expires_at"], "expires_at"); err != nil {
		return e, err
	}
	if e.Display, err = decodeDisplay(m["display"]); err != nil {
		return e, err
	}
	if e.Files, err = decodeFiles(m["files"]); err != nil {
		return e, err
	}
	return e, nil
}

func decodeDisplay(raw json.RawMessage) (Display, error) {
	var d Display
	m, err := members(raw, "display", []string{"fields", "title"}, "summary")
	if err != nil {
		return d, err
	}
	if raw, ok := m["summary"]; ok {
		if d.Summary, err = decodeString(raw, "display summary"); err != nil {
			return d, err
		}
		if d.Summary == "" {
			return d, malformed("the display summary is empty")
		}
	}
	if d.Title, err = decodeString(m["title"], "display title"); err != nil {
		return d, err
	}
	fields, err := decodeArray(m["fields"], "display fields")
	if err != nil {
		return d, err
	}
	d.Fields = make([]Field, len(fields))
	for i, raw := range fields {
		where := fmt.Sprintf("field %d", i+1)
		fm, err := members(raw, where, []string{"kind", "label", "values", "written_by"})
		if err != nil {
			return d, err
		}
		f := &d.Fields[i]
		kind, err := decodeString(fm["kind"], where+" kind")
		if err != nil {
			return d, err
		}
		f.Kind = FieldKind(kind)
		if f.Label, err = decodeString(fm["label"], where+" label"); err != nil {
			return d, err
		}
		by, err := decodeString(fm["written_by"], where+" written_by")
		if err != nil {
			return d, err
		}
		f.WrittenBy = WrittenBy(by)
		values, err := decodeArray(fm["values"], where+" values")
		if err != nil {
			return d, err
		}
		f.Values = make([]string, len(values))
		for j, v := range values {
			if f.Values[j], err = decodeString(v, fmt.Sprintf("%s value %d", where, j+1)); err != nil {
				return d, err
			}
		}
	}
	return d, nil
}

func decodeFiles(raw json.RawMessage) ([]File, error) {
	items, err := decodeArray(raw, "files")
	if err != nil {
		return nil, err
	}
	files := make([]File, len(items))
	for i, raw := range items {
		where := fmt.Sprintf("file %d", i+1)
		m, err := members(raw, where, []string{"content_type", "name", "sha256", "size"})
		if err != nil {
			return nil, err
		}
		f := &files[i]
		if f.ContentType, err = decodeString(m["content_type"], where+" content_type"); err != nil {
			return nil, err
		}
		if f.Name, err = decodeString(m["name"], where+" name"); err != nil {
			return nil, err
		}
		if f.SHA256, err = decodeString(m["sha256"], where+" sha256"); err != nil {
			return nil, err
		}
		if f.Size, err = decodeInt(m["size"], where+" size"); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// members reads one JSON object and returns its members by name. Every name
// in required must be present, names in optional may be, and no other name
// nor any name twice is allowed. Nothing may follow the object.
func members(raw []byte, where string, required []string, optional ...string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, malformed(where + " is not a JSON object")
	}
	m := make(map[string]json.RawMessage, len(required)+len(optional))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(where + " is not valid JSON")
		}
		name, _ := tok.(string) // object keys are always strings
		if _, dup := m[name]; dup {
			return nil, malformed(where + " holds a member twice")
		}
		known := false
		for _, n := range required {
			known = known || n == name
		}
		for _, n := range optional {
			known = known || n == name
		}
		if !known {
			return nil, malformed(where + " holds an unknown member")
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, malformed(where + " is not valid JSON")
		}
		m[name] = v
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('}') {
		return nil, malformed(where + " is not valid JSON")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, malformed(where + " is followed by more data")
	}
	for _, n := range required {
		if _, ok := m[n]; !ok {
			return nil, malformed(where + " lacks the member " + n)
		}
	}
	return m, nil
}

func decodeString(raw json.RawMessage, what string) (string, error) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", malformed(what + " is not a string")
	}
	return s, nil
}

func decodeArray(raw json.RawMessage, what string) ([]json.RawMessage, error) {
	var a []json.RawMessage
	if len(raw) == 0 || raw[0] != '[' || json.Unmarshal(raw, &a) != nil {
		return nil, malformed(what + " is not an array")
	}
	return a, nil
}

// decodeInt reads a whole number written as plain digits (no sign, fraction
// or exponent); anything else is refused.
func decodeInt(raw json.RawMessage, what string) (int64, error) {
	if len(raw) == 0 || len(raw) > 19 {
		return 0, malformed(what + " is not a whole number")
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return 0, malformed(what + " is not a whole number")
		}
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return 0, malformed(what + " is not a whole number")
	}
	return n, nil
}

func decodeTime(raw json.RawMessage, what string) (time.Time, error) {
	s, err := decodeString(raw, what)
	if err != nil {
		return time.Time{}, err
	}
	t, ok := parseTime(s)
	if !ok {
		return time.Time{}, malformed(what + " is not a time YYYY-MM-DDTHH:MM:SSZ")
	}
	return t, nil
}

// parseTime reads exactly YYYY-MM-DDTHH:MM:SSZ, refusing fractions, offsets
// and dates that do not exist.
func parseTime(s string) (time.Time, bool) {
	if len(s) != len(TimeFormat) {
		return time.Time{}, false
	}
	t, err := time.Parse(TimeFormat, s)
	if err != nil || t.Format(TimeFormat) != s {
		return time.Time{}, false
	}
	return t, true
}

// checkTime requires a time that TimeFormat writes exactly: whole seconds,
// years 1970 to 9999.
func checkTime(t time.Time, what string) error {
	if t.Nanosecond() != 0 {
		return malformed(what + " is not a whole second")
	}
	if y := t.UTC().Year(); y < 1970 || y > 9999 {
		return malformed(what + " is not between the years 1970 and 9999")
	}
	return nil
}

func malformed(sentence string) error {
	return &Error{Code: InvalidRequest, Message: "envelope: " + sentence}
}

// validOperation: an operation name, [a-z0-9_]{1,64} (SPEC §2).
func validOperation(s string) bool { return validRefusalCode(s) }

// validBuild: <connector>@<version>, the connector 1–64 of [a-z0-9_-]
// beginning with a letter or digit, the version 1–64 of [0-9A-Za-z.+-].
func validBuild(s string) bool {
	name, version, ok := strings.Cut(s, "@")
	if !ok || len(name) == 0 || len(name) > 64 || len(version) == 0 || len(version) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || i > 0 && (c == '_' || c == '-')) {
			return false
		}
	}
	for i := 0; i < len(version); i++ {
		c := version[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '+' || c == '-') {
			return false
		}
	}
	return true
}

// validReplyPubkey: "p256:" + unpadded base64url of a 65-byte uncompressed
// point that lies on P-256.
func validReplyPubkey(s string) bool {
	text, ok := strings.CutPrefix(s, "p256:")
	if !ok || len(text) != base64.RawURLEncoding.EncodedLen(65) {
		return false
	}
	point, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil || len(point) != 65 || point[0] != 4 {
		return false
	}
	_, err = ecdh.P256().NewPublicKey(point)
	return err == nil
}
