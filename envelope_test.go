package countersign

import (
	"bytes"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	mrand "math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

type vectorFile struct {
	Envelope struct {
		Text     string `json:"text"`
		TaskHash string `json:"task_hash"`
	} `json:"envelope"`
	SupplyHash []struct {
		Hash     string  `json:"hash"`
		Note     *string `json:"note"`
		Supplied *string `json:"supplied"`
		Text     string  `json:"text"`
	} `json:"supply_hash"`
}

func loadVectors(t testing.TB) vectorFile {
	t.Helper()
	b, err := os.ReadFile("testdata/sealing-and-signing.json")
	if err != nil {
		t.Fatal(err)
	}
	var v vectorFile
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if v.Envelope.Text == "" || len(v.SupplyHash) != 2 {
		t.Fatal("the vectors file lacks the envelope or supply_hash section")
	}
	return v
}

func sha256Hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// vectorEnvelope is the contract vectors' envelope, member by member.
func vectorEnvelope() Envelope {
	return Envelope{
		AnswerBy:  &AnswerBy{Operation: "guess", Supplies: SuppliesText},
		Build:     "probe@1.0.0",
		CreatedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC),
		Display: Display{
			Title: "Guess my number",
			Fields: []Field{{
				Kind:      FieldText,
				Label:     "Question",
				Values:    []string{"I picked a number from 1 to 10. Your guess?"},
				WrittenBy: WrittenByProject,
			}},
		},
		ExpiresAt:   time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Files:       []File{},
		ID:          "r7k2m9q4x1z8c3v6b5n0p2w4s6-1",
		Kind:        KindInput,
		Owner:       "alice.near",
		PolicyHash:  "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a",
		Preparer:    "bot.near",
		Project:     "probe",
		ProjectUUID: "4f1c2b9e-8a55-4c6e-9d0f-2b7a1e3c5d60",
		ReplyPubkey: "p256:BJ2z-w1j_wj1qPuly_dPzTs2OcM1NTDUnWfy2nUEc7_1ZAbq4s1pbL9SbuBcADbnKV1lXcYFiWToD_qv6xwJyEQ",
		StateHash:   "4ba69735ca53765ed6a709edb56c6ea236b7193a3b29a6b390c346f0f4340e4e",
		Thread:      "r7k2m9q4x1z8c3v6b5n0p2w4s6-1",
	}
}

func noticeEnvelope() Envelope {
	e := vectorEnvelope()
	e.Kind = KindNotice
	e.AnswerBy = nil
	e.ReplyPubkey = ""
	e.ID = "r7k2m9q4x1z8c3v6b5n0p2w4s6-2"
	e.Display = Display{Title: "You guessed it: 7, in 3 attempts", Fields: []Field{
		{Kind: FieldMoney, Label: "Number", Values: []string{"7"}, WrittenBy: WrittenByProject},
		{Kind: FieldText, Label: "Attempts", Values: []string{"3"}, WrittenBy: WrittenByProject},
	}}
	return e
}

func TestVectorEnvelope(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	e := vectorEnvelope()
	got, err := e.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != v.Envelope.Text {
		t.Fatalf("canonical bytes differ from the vector\n got %s\nwant %s", got, v.Envelope.Text)
	}
	if h := TaskHash(got); h != v.Envelope.TaskHash || h != sha256Hex([]byte(v.Envelope.Text)) {
		t.Fatalf("TaskHash = %s, want %s", h, v.Envelope.TaskHash)
	}
	// The vector's note: the policy {} and the state "state".
	if e.PolicyHash != sha256Hex([]byte("{}")) || e.StateHash != sha256Hex([]byte("state")) {
		t.Fatal("policy_hash or state_hash is not what the vector's note says")
	}
	parsed, err := ParseEnvelope([]byte(v.Envelope.Text))
	if err != nil {
		t.Fatalf("ParseEnvelope(vector) = %v", err)
	}
	if !reflect.DeepEqual(parsed, e) {
		t.Fatalf("ParseEnvelope(vector) = %+v\nwant %+v", parsed, e)
	}
}

func TestSupplyHashVectors(t *testing.T) {
	t.Parallel()
	v := loadVectors(t)
	decode := func(s *string) []byte {
		if s == nil {
			return nil
		}
		b, err := base64.StdEncoding.DecodeString(*s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range v.SupplyHash {
		if got := SupplyHash(decode(c.Note), decode(c.Supplied)); got != c.Hash {
			t.Errorf("SupplyHash for %s = %s, want %s", c.Text, got, c.Hash)
		}
		if sha256Hex([]byte(c.Text)) != c.Hash {
			t.Errorf("the vector's text does not hash to its hash")
		}
	}
	if got := SupplyHash(nil, nil); got != "93121736c33115cb57757d3d5c09b430c4a03d2c3fa06dbbda48a466620b5799" {
		t.Fatalf("SupplyHash(nothing) = %s", got)
	}
	// An empty slice is a string, not null; note and supplied do not swap.
	if SupplyHash([]byte{}, nil) != sha256Hex([]byte(`{"note":"","supplied":null}`)) {
		t.Fatal("empty note is not written as an empty string")
	}
	a, b := []byte("sealed note"), []byte("sealed answer")
	want := `{"note":"` + base64.StdEncoding.EncodeToString(a) + `","supplied":"` + base64.StdEncoding.EncodeToString(b) + `"}`
	if SupplyHash(a, b) != sha256Hex([]byte(want)) || SupplyHash(a, b) == SupplyHash(b, a) {
		t.Fatal("SupplyHash with both present is wrong")
	}
	// Bytes whose base64 holds + and /, which are not escaped.
	odd := []byte{0xfb, 0xff, 0xbf}
	if SupplyHash(nil, odd) != sha256Hex([]byte(`{"note":null,"supplied":"+/+/"}`)) {
		t.Fatal("base64 with + and / is written differently")
	}
}

// plainJSON serializes the envelope the way any sorted-key serializer does:
// it builds generic maps (encoding/json sorts map keys) and turns HTML
// escaping off.
func plainJSON(t testing.TB, e Envelope) []byte {
	t.Helper()
	fields := []any{}
	for _, f := range e.Display.Fields {
		values := []any{}
		for _, v := range f.Values {
			values = append(values, v)
		}
		fields = append(fields, map[string]any{"kind": string(f.Kind), "label": f.Label, "values": values, "written_by": string(f.WrittenBy)})
	}
	files := []any{}
	for _, f := range e.Files {
		files = append(files, map[string]any{"content_type": f.ContentType, "name": f.Name, "sha256": f.SHA256, "size": f.Size})
	}
	display := map[string]any{"fields": fields, "title": e.Display.Title}
	if e.Display.Summary != "" {
		display["summary"] = e.Display.Summary
	}
	m := map[string]any{
		"build":        e.Build,
		"created_at":   e.CreatedAt.UTC().Format("2006-01-02T15:04:05Z"),
		"display":      display,
		"expires_at":   e.ExpiresAt.UTC().Format("2006-01-02T15:04:05Z"),
		"files":        files,
		"id":           e.ID,
		"kind":         string(e.Kind),
		"owner":        e.Owner,
		"policy_hash":  e.PolicyHash,
		"preparer":     e.Preparer,
		"project":      e.Project,
		"project_uuid": e.ProjectUUID,
		"state_hash":   e.StateHash,
		"thread":       e.Thread,
		"v":            1,
	}
	if e.AnswerBy != nil {
		m["answer_by"] = map[string]any{"operation": e.AnswerBy.Operation, "supplies": string(e.AnswerBy.Supplies)}
	}
	if e.ReplyPubkey != "" {
		m["reply_pubkey"] = e.ReplyPubkey
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// textPool holds pieces a display may legitimately show, including the
// characters that serializers are known to treat differently (<, >, &, ",
// \, line feed, tab, DEL-free Latin-1, astral characters, combining marks).
var textPool = []string{
	"a", "Z", "0", " ", "<", ">", "&", `"`, `\`, "'", "/", "é", "e\u0301", "ß", "日本", "€",
	"💸", "❤\ufe0f", "\u00a0", "\u3000", "x\u0301\u0302\u0303\u0304", "<script>", "&amp;", "\\n", "%", "+",
	"\U0001F600", "\u0915\u094d\u0937", "ﬁ",
}

func randomText(r *mrand.Rand, maxPieces int, multiline bool) string {
	var b strings.Builder
	b.WriteString("v") // never blank
	for range r.IntN(maxPieces) {
		b.WriteString(textPool[r.IntN(len(textPool))])
		if multiline && r.IntN(5) == 0 {
			b.WriteString([]string{"\n", "\t", "\n\n"}[r.IntN(3)])
		}
	}
	return b.String()
}

func randomEnvelope(r *mrand.Rand) Envelope {
	e := vectorEnvelope()
	switch r.IntN(3) {
	case 0:
		e.Kind, e.AnswerBy.Supplies = KindConfirm, SuppliesNone
	case 1:
		e.AnswerBy.Supplies = []Supplies{SuppliesText, SuppliesFile}[r.IntN(2)]
	case 2:
		e.Kind, e.AnswerBy, e.ReplyPubkey = KindNotice, nil, ""
	}
	e.Display.Title = randomText(r, 10, false)
	e.Display.Summary = ""
	if r.IntN(2) == 0 {
		e.Display.Summary = randomText(r, 12, false)
	}
	e.Display.Fields = []Field{}
	kinds := []FieldKind{FieldMoney, FieldAccount, FieldAddress, FieldText, FieldLongText, FieldList}
	for range r.IntN(MaxFields + 1) {
		f := Field{Kind: kinds[r.IntN(len(kinds))], Label: randomText(r, 5, false), WrittenBy: []WrittenBy{WrittenByAgent, WrittenByProject}[r.IntN(2)]}
		n := 1
		if f.Kind == FieldList {
			n = 1 + r.IntN(MaxListValues)
		}
		for range n {
			f.Values = append(f.Values, randomText(r, 20, f.Kind == FieldLongText))
		}
		e.Display.Fields = append(e.Display.Fields, f)
	}
	e.Files = []File{}
	for i := range r.IntN(MaxFiles + 1) {
		e.Files = append(e.Files, File{
			ContentType: []string{"application/pdf", "text/plain", "image/svg+xml", "message/rfc822"}[r.IntN(4)],
			Name:        strings.NewReplacer("/", "", `\`, "", "<", "", ">", "", `"`, "").Replace(randomText(r, 6, false)) + "-" + string(rune('a'+i)) + ".bin",
			SHA256:      sha256Hex([]byte{byte(i)}),
			Size:        r.Int64N(MaxFilesBytes / MaxFiles),
		})
	}
	e.CreatedAt = time.Unix(1_700_000_000+r.Int64N(1e8), 0)
	e.ExpiresAt = e.CreatedAt.Add(time.Duration(1+r.Int64N(int64(MaxTaskLife/time.Second))) * time.Second)
	return e
}

func TestCanonicalMatchesPlainSerializer(t *testing.T) {
	t.Parallel()
	r := mrand.New(mrand.NewPCG(1, 2))
	envs := []Envelope{vectorEnvelope(), noticeEnvelope()}
	for range 500 {
		envs = append(envs, randomEnvelope(r))
	}
	for i, e := range envs {
		got, err := e.Canonical()
		if err != nil {
			t.Fatalf("envelope %d: %v", i, err)
		}
		if want := plainJSON(t, e); !bytes.Equal(got, want) {
			t.Fatalf("envelope %d:\n got %s\nwant %s", i, got, want)
		}
		parsed, err := ParseEnvelope(got)
		if err != nil {
			t.Fatalf("envelope %d: ParseEnvelope(Canonical()) = %v", i, err)
		}
		if again, _ := parsed.Canonical(); !bytes.Equal(again, got) {
			t.Fatalf("envelope %d does not round-trip", i)
		}
		want := e
		want.CreatedAt, want.ExpiresAt = e.CreatedAt.UTC(), e.ExpiresAt.UTC()
		if !reflect.DeepEqual(parsed, want) {
			t.Fatalf("envelope %d: parsed %+v\nwant %+v", i, parsed, want)
		}
	}
}

func TestCanonicalWritesTextAsIs(t *testing.T) {
	t.Parallel()
	e := vectorEnvelope()
	e.Display.Title = `a<b>&c "q" \ é 💸`
	e.Display.Fields[0] = Field{Kind: FieldLongText, Label: "Body", Values: []string{"line 1\n\tline 2"}, WrittenBy: WrittenByAgent}
	b, err := e.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"title":"a<b>&c \"q\" \\ é 💸"`, `"values":["line 1\n\tline 2"]`, `"written_by":"agent"`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("canonical bytes lack %s:\n%s", want, b)
		}
	}
	n := noticeEnvelope()
	nb, err := n.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(nb, []byte("answer_by")) || bytes.Contains(nb, []byte("reply_pubkey")) {
		t.Fatalf("a notice carries answer_by or reply_pubkey: %s", nb)
	}
	n.Files = nil
	nb2, err := n.Canonical()
	if err != nil || !bytes.Equal(nb, nb2) || !bytes.Contains(nb2, []byte(`"files":[]`)) {
		t.Fatalf("nil files are not written as []: %s", nb2)
	}
	n.Display.Fields = nil
	if nb3, err := n.Canonical(); err != nil || !bytes.Contains(nb3, []byte(`"display":{"fields":[],"title"`)) {
		t.Fatalf("nil fields are not written as []: %s, %v", nb3, err)
	}
	// Any location is written in UTC.
	local := vectorEnvelope()
	local.CreatedAt = local.CreatedAt.In(time.FixedZone("X", 5*3600+1800))
	if lb, err := local.Canonical(); err != nil || !bytes.Contains(lb, []byte(`"created_at":"2026-11-29T12:00:00Z"`)) {
		t.Fatalf("a time in another zone: %s, %v", lb, err)
	}
}

func TestWriterRefusesWhatSerializersDisagreeOn(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"\xff", "a\xc3", "\u2028", "x\u2029y", "\xed\xa0\x80"} {
		w := &jsonWriter{}
		w.str(s)
		if code := ErrorCode(w.err); code != InvalidRequest {
			t.Errorf("str(%q): err = %v", s, w.err)
		}
	}
	w := &jsonWriter{}
	w.str("\x00\x01\x08\x0c\x1f\x7f")
	if got := string(w.b); got != `"\u0000\u0001\b\f\u001f`+"\x7f"+`"` {
		t.Fatalf("control escapes = %s", got)
	}
}

func mustPoint(t testing.TB) []byte {
	t.Helper()
	k, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k.PublicKey().Bytes()
}

func TestEnvelopeRefusals(t *testing.T) {
	t.Parallel()
	point := mustPoint(t)
	offCurve := bytes.Clone(point)
	offCurve[64] ^= 1
	compressed := append([]byte{2 + point[64]&1}, point[1:33]...)
	enc := base64.RawURLEncoding.EncodeToString
	cases := []struct {
		name    string
		edit    func(*Envelope)
		code    Code
		message string
	}{
		{"unknown kind", func(e *Envelope) { e.Kind = "ask" }, InvalidRequest, "envelope: kind is not one of confirm, input and notice"},
		{"input without answer_by", func(e *Envelope) { e.AnswerBy = nil }, InvalidRequest, "envelope: answer_by is missing for a task that asks"},
		{"operation empty", func(e *Envelope) { e.AnswerBy.Operation = "" }, InvalidRequest, "envelope: answer_by operation is not 1 to 64 of a-z, 0-9 and _"},
		{"operation 65", func(e *Envelope) { e.AnswerBy.Operation = strings.Repeat("a", 65) }, InvalidRequest, "envelope: answer_by operation is not 1 to 64 of a-z, 0-9 and _"},
		{"operation uppercase", func(e *Envelope) { e.AnswerBy.Operation = "Guess" }, InvalidRequest, "envelope: answer_by operation is not 1 to 64 of a-z, 0-9 and _"},
		{"input supplies none", func(e *Envelope) { e.AnswerBy.Supplies = SuppliesNone }, InvalidRequest, "envelope: answer_by supplies does not fit the kind (confirm: none; input: text or file)"},
		{"input supplies unknown", func(e *Envelope) { e.AnswerBy.Supplies = "image" }, InvalidRequest, "envelope: answer_by supplies does not fit the kind (confirm: none; input: text or file)"},
		{"confirm supplies text", func(e *Envelope) { e.Kind = KindConfirm }, InvalidRequest, "envelope: answer_by supplies does not fit the kind (confirm: none; input: text or file)"},
		{"no reply key", func(e *Envelope) { e.ReplyPubkey = "" }, InvalidRequest, "envelope: reply_pubkey is not p256:"},
		{"reply key other prefix", func(e *Envelope) { e.ReplyPubkey = "p384:" + enc(point) }, InvalidRequest, "envelope: reply_pubkey"},
		{"reply key padded", func(e *Envelope) { e.ReplyPubkey = "p256:" + base64.URLEncoding.EncodeToString(point) }, InvalidRequest, "envelope: reply_pubkey"},
		{"reply key std alphabet", func(e *Envelope) {
			e.ReplyPubkey = "p256:" + strings.NewReplacer("-", "+", "_", "/").Replace(e.ReplyPubkey[5:])
		}, InvalidRequest, "envelope: reply_pubkey"},
		{"reply key short", func(e *Envelope) { e.ReplyPubkey = "p256:" + enc(point[:64]) }, InvalidRequest, "envelope: reply_pubkey"},
		{"reply key compressed", func(e *Envelope) { e.ReplyPubkey = "p256:" + enc(compressed) }, InvalidRequest, "envelope: reply_pubkey"},
		{"reply key off the curve", func(e *Envelope) { e.ReplyPubkey = "p256:" + enc(offCurve) }, InvalidRequest, "envelope: reply_pubkey"},
		{"notice with answer_by", func(e *Envelope) { e.Kind = KindNotice; e.ReplyPubkey = "" }, InvalidRequest, "envelope: a notice names no answer_by"},
		{"notice with reply key", func(e *Envelope) { e.Kind = KindNotice; e.AnswerBy = nil }, InvalidRequest, "envelope: a notice has no reply_pubkey"},
		{"build without version", func(e *Envelope) { e.Build = "probe@" }, InvalidRequest, "envelope: build is not <connector>@<version>"},
		{"build without @", func(e *Envelope) { e.Build = "probe" }, InvalidRequest, "envelope: build is not <connector>@<version>"},
		{"build two @", func(e *Envelope) { e.Build = "probe@1@2" }, InvalidRequest, "envelope: build is not <connector>@<version>"},
		{"build space", func(e *Envelope) { e.Build = "probe@1.0 beta" }, InvalidRequest, "envelope: build is not <connector>@<version>"},
		{"build uppercase connector", func(e *Envelope) { e.Build = "Probe@1.0.0" }, InvalidRequest, "envelope: build is not <connector>@<version>"},
		{"created fraction", func(e *Envelope) { e.CreatedAt = e.CreatedAt.Add(time.Millisecond) }, InvalidRequest, "envelope: created_at is not a whole second"},
		{"expires fraction", func(e *Envelope) { e.ExpiresAt = e.ExpiresAt.Add(-time.Nanosecond) }, InvalidRequest, "envelope: expires_at is not a whole second"},
		{"created zero", func(e *Envelope) { e.CreatedAt = time.Time{} }, InvalidRequest, "envelope: created_at is not between the years 1970 and 9999"},
		{"expires 10000", func(e *Envelope) { e.ExpiresAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, InvalidRequest, "envelope: expires_at is not between the years 1970 and 9999"},
		{"expires equals created", func(e *Envelope) { e.ExpiresAt = e.CreatedAt }, InvalidRequest, "envelope: expires_at is not after created_at"},
		{"expires before created", func(e *Envelope) { e.ExpiresAt = e.CreatedAt.Add(-time.Hour) }, InvalidRequest, "envelope: expires_at is not after created_at"},
		{"life one second too long", func(e *Envelope) { e.ExpiresAt = e.CreatedAt.Add(24*time.Hour + time.Second) }, TaskLifeTooLong, "a task lives at most 24 hours"},
		{"id empty", func(e *Envelope) { e.ID = "" }, InvalidRequest, "envelope: id is not"},
		{"id 81", func(e *Envelope) { e.ID = strings.Repeat("a", 81) }, InvalidRequest, "envelope: id is not"},
		{"id uppercase", func(e *Envelope) { e.ID = "R7-1" }, InvalidRequest, "envelope: id is not"},
		{"thread underscore", func(e *Envelope) { e.Thread = "a_b" }, InvalidRequest, "envelope: thread is not"},
		{"owner one char", func(e *Envelope) { e.Owner = "a" }, InvalidRequest, "envelope: owner is not a NEAR account id"},
		{"owner 65", func(e *Envelope) { e.Owner = strings.Repeat("a", 65) }, InvalidRequest, "envelope: owner is not a NEAR account id"},
		{"owner uppercase", func(e *Envelope) { e.Owner = "Alice.near" }, InvalidRequest, "envelope: owner is not a NEAR account id"},
		{"owner leading dot", func(e *Envelope) { e.Owner = ".alice" }, InvalidRequest, "envelope: owner is not a NEAR account id"},
		{"owner trailing dash", func(e *Envelope) { e.Owner = "alice-" }, InvalidRequest, "envelope: owner is not a NEAR account id"},
		{"owner double separator", func(e *Envelope) { e.Owner = "alice._near" }, InvalidRequest, "envelope: owner is not a NEAR account id"},
		{"preparer space", func(e *Envelope) { e.Preparer = "bot near" }, InvalidRequest, "envelope: preparer is not a NEAR account id"},
		{"project empty", func(e *Envelope) { e.Project = "" }, InvalidRequest, "envelope: project is not"},
		{"project slash", func(e *Envelope) { e.Project = "a/b" }, InvalidRequest, "envelope: project is not"},
		{"project leading dot", func(e *Envelope) { e.Project = ".." }, InvalidRequest, "envelope: project is not"},
		{"project 65", func(e *Envelope) { e.Project = strings.Repeat("p", 65) }, InvalidRequest, "envelope: project is not"},
		{"uuid uppercase", func(e *Envelope) { e.ProjectUUID = strings.ToUpper(e.ProjectUUID) }, InvalidRequest, "envelope: project_uuid is not a lowercase UUID"},
		{"uuid braces", func(e *Envelope) { e.ProjectUUID = "{" + e.ProjectUUID[1:35] + "}" }, InvalidRequest, "envelope: project_uuid is not a lowercase UUID"},
		{"uuid without hyphens", func(e *Envelope) { e.ProjectUUID = strings.ReplaceAll(e.ProjectUUID, "-", "") }, InvalidRequest, "envelope: project_uuid is not a lowercase UUID"},
		{"policy hash uppercase", func(e *Envelope) { e.PolicyHash = strings.ToUpper(e.PolicyHash) }, InvalidRequest, "envelope: policy_hash is not 64 lowercase hex digits"},
		{"policy hash 63", func(e *Envelope) { e.PolicyHash = e.PolicyHash[1:] }, InvalidRequest, "envelope: policy_hash is not 64 lowercase hex digits"},
		{"state hash 65", func(e *Envelope) { e.StateHash += "0" }, InvalidRequest, "envelope: state_hash is not 64 lowercase hex digits"},
		{"display invalid", func(e *Envelope) { e.Display.Title = "a\u202eb" }, DisplayInvalid, "the title holds a bidirectional control character"},
		{"file invalid", func(e *Envelope) {
			e.Files = []File{{ContentType: "text/plain", Name: "a/b", SHA256: e.StateHash, Size: 1}}
		}, DisplayInvalid, "file 1 name holds a path separator"},
		{"files too large", func(e *Envelope) {
			e.Files = []File{{ContentType: "text/plain", Name: "a", SHA256: e.StateHash, Size: MaxFilesBytes + 1}}
		}, TaskTooLarge, "the files together are larger than 6 MiB (6291456 bytes)"},
		{"envelope too large", func(e *Envelope) {
			e.Display.Fields = nil
			for range 3 {
				e.Display.Fields = append(e.Display.Fields, Field{Kind: FieldLongText, Label: "L", Values: []string{strings.Repeat("é", MaxLongTextChars)}, WrittenBy: WrittenByAgent})
			}
		}, TaskTooLarge, "the envelope is larger than 262144 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := vectorEnvelope()
			c.edit(&e)
			b, err := e.Canonical()
			if err == nil {
				t.Fatalf("Canonical accepted it: %s", b)
			}
			if code := ErrorCode(err); code != c.code {
				t.Fatalf("code = %s, want %s (%v)", code, c.code, err)
			}
			if msg := ErrorMessage(err); !strings.HasPrefix(msg, c.message) {
				t.Fatalf("message = %q, want it to begin %q", msg, c.message)
			}
		})
	}
}

func TestEnvelopeBoundariesAccepted(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(*Envelope)
	}{
		{"life exactly 24 hours", func(e *Envelope) { e.ExpiresAt = e.CreatedAt.Add(24 * time.Hour) }},
		{"life one second", func(e *Envelope) { e.ExpiresAt = e.CreatedAt.Add(time.Second) }},
		{"year 1970", func(e *Envelope) {
			e.CreatedAt = time.Unix(0, 0)
			e.ExpiresAt = e.CreatedAt.Add(time.Hour)
		}},
		{"year 9999", func(e *Envelope) {
			e.CreatedAt = time.Date(9999, 12, 31, 22, 0, 0, 0, time.UTC)
			e.ExpiresAt = e.CreatedAt.Add(time.Hour)
		}},
		{"id 80", func(e *Envelope) { e.ID = strings.Repeat("a", 80) }},
		{"implicit owner", func(e *Envelope) { e.Owner = strings.Repeat("ab", 32) }},
		{"eth implicit owner", func(e *Envelope) { e.Owner = "0x" + strings.Repeat("a1", 20) }},
		{"owner two chars", func(e *Envelope) { e.Owner = "ab" }},
		{"owner with separators", func(e *Envelope) { e.Owner = "a-b_c.d" }},
		{"project 64", func(e *Envelope) { e.Project = "p" + strings.Repeat("-", 63) }},
		{"build with prerelease", func(e *Envelope) { e.Build = "my_connector-2@1.2.3-rc.1+build.7" }},
		{"operation 64", func(e *Envelope) { e.AnswerBy.Operation = strings.Repeat("a", 64) }},
		{"input supplies file", func(e *Envelope) { e.AnswerBy.Supplies = SuppliesFile }},
		{"confirm supplies none", func(e *Envelope) { e.Kind = KindConfirm; e.AnswerBy.Supplies = SuppliesNone }},
		{"fresh reply key", func(e *Envelope) {
			e.ReplyPubkey = "p256:" + base64.RawURLEncoding.EncodeToString(mustPoint(t))
		}},
		{"envelope near the limit", func(e *Envelope) {
			e.Display.Fields = nil
			for range 5 {
				e.Display.Fields = append(e.Display.Fields, Field{Kind: FieldLongText, Label: "L", Values: []string{strings.Repeat("a", MaxLongTextChars)}, WrittenBy: WrittenByAgent})
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := vectorEnvelope()
			c.edit(&e)
			b, err := e.Canonical()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ParseEnvelope(b); err != nil {
				t.Fatalf("ParseEnvelope(Canonical()) = %v", err)
			}
		})
	}
}

// reencode changes the vector envelope as generic JSON and writes it back
// with sorted keys and no HTML escaping, so that each refusal below is for
// the one thing changed and not for a lost canonical form.
func reencode(t *testing.T, edit func(m map[string]any)) []byte {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(loadVectors(t).Envelope.Text))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatal(err)
	}
	edit(m)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestParseEnvelopeRefusals(t *testing.T) {
	t.Parallel()
	text := loadVectors(t).Envelope.Text
	replace := func(old, new string) []byte {
		t.Helper()
		if !strings.Contains(text, old) {
			t.Fatalf("the vector lacks %s", old)
		}
		return []byte(strings.Replace(text, old, new, 1))
	}
	display := func(m map[string]any) map[string]any { return m["display"].(map[string]any) }
	field := func(m map[string]any) map[string]any {
		return display(m)["fields"].([]any)[0].(map[string]any)
	}
	withFile := func(m map[string]any) map[string]any {
		f := map[string]any{"content_type": "text/plain", "name": "a.txt", "sha256": m["state_hash"], "size": json.Number("5")}
		m["files"] = []any{f}
		return f
	}
	if _, err := ParseEnvelope(reencode(t, func(m map[string]any) { withFile(m) })); err != nil {
		t.Fatalf("the base case with a file is refused: %v", err)
	}

	cases := []struct {
		name    string
		in      []byte
		code    Code
		message string
	}{
		{"empty", nil, InvalidRequest, "envelope: the envelope is not a JSON object"},
		{"array", []byte(`[]`), InvalidRequest, "envelope: the envelope is not a JSON object"},
		{"null", []byte(`null`), InvalidRequest, "envelope: the envelope is not a JSON object"},
		{"truncated", []byte(text[:len(text)-1]), InvalidRequest, "envelope: the envelope is not valid JSON"},
		{"trailing object", []byte(text + "{}"), InvalidRequest, "envelope: the envelope is followed by more data"},
		{"trailing garbage", []byte(text + "x"), InvalidRequest, "envelope: the envelope is followed by more data"},
		{"trailing newline", []byte(text + "\n"), InvalidRequest, "envelope: it is not in canonical form"},
		{"leading space", []byte(" " + text), InvalidRequest, "envelope: it is not in canonical form"},
		{"byte order mark", []byte("\ufeff" + text), InvalidRequest, "envelope: the envelope is not a JSON object"},
		{"space after colon", replace(`"build":`, `"build": `), InvalidRequest, "envelope: it is not in canonical form"},
		{"space after comma", replace(`,"id":`, `, "id":`), InvalidRequest, "envelope: it is not in canonical form"},
		{"members out of order", replace(`"answer_by":{"operation":"guess","supplies":"text"},"build":"probe@1.0.0"`, `"build":"probe@1.0.0","answer_by":{"operation":"guess","supplies":"text"}`), InvalidRequest, "envelope: it is not in canonical form"},
		{"nested members out of order", replace(`{"operation":"guess","supplies":"text"}`, `{"supplies":"text","operation":"guess"}`), InvalidRequest, "envelope: it is not in canonical form"},
		{"escaped letter", replace(`"Guess my number"`, `"Guess my numbe\u0072"`), InvalidRequest, "envelope: it is not in canonical form"},
		{"escaped slash", replace(`"Guess my number"`, `"Guess\/my number"`), InvalidRequest, "envelope: it is not in canonical form"},
		{"HTML escape", replace(`"Guess my number"`, `"Guess \u003c number"`), InvalidRequest, "envelope: it is not in canonical form"},
		{"escaped U+2028", replace(`"Guess my number"`, `"Guess \u2028 number"`), DisplayInvalid, "the title holds a line or paragraph separator"},
		{"raw U+2028", replace(`"Guess my number"`, "\"Guess \u2028 number\""), DisplayInvalid, "the title holds a line or paragraph separator"},
		{"lone surrogate escape", replace(`"Guess my number"`, `"Guess \ud800 number"`), InvalidRequest, "envelope: it is not in canonical form"},
		{"invalid UTF-8", replace(`"Guess my number"`, "\"Guess \xff number\""), InvalidRequest, "envelope: it is not valid UTF-8"},
		{"v as string", replace(`"v":1`, `"v":"1"`), InvalidRequest, "envelope: v is not a whole number"},
		{"v as 1.0", replace(`"v":1`, `"v":1.0`), InvalidRequest, "envelope: v is not a whole number"},
		{"v as 1e0", replace(`"v":1`, `"v":1e0`), InvalidRequest, "envelope: v is not a whole number"},
		{"v 2", replace(`"v":1`, `"v":2`), InvalidRequest, "envelope: v is not 1"},
		{"v 01", replace(`"v":1`, `"v":01`), InvalidRequest, "envelope: the envelope is not valid JSON"},
		{"v null", replace(`"v":1`, `"v":null`), InvalidRequest, "envelope: v is not a whole number"},
		{"duplicate member", replace(`"kind":"input"`, `"kind":"input","kind":"input"`), InvalidRequest, "envelope: the envelope holds a member twice"},
		{"duplicate nested member", replace(`"operation":"guess"`, `"operation":"guess","operation":"guess"`), InvalidRequest, "envelope: answer_by holds a member twice"},
		{"duplicate field member", replace(`"label":"Question"`, `"label":"Question","label":"Question"`), InvalidRequest, "envelope: field 1 holds a member twice"},
		{"unknown member", reencode(t, func(m map[string]any) { m["note"] = "x" }), InvalidRequest, "envelope: the envelope holds an unknown member"},
		{"empty summary", reencode(t, func(m map[string]any) { display(m)["summary"] = "" }), InvalidRequest, "envelope: the display summary is empty"},
		{"summary not a string", reencode(t, func(m map[string]any) { display(m)["summary"] = 5 }), InvalidRequest, "envelope: display summary is not a string"},
		{"summary with a line break", reencode(t, func(m map[string]any) { display(m)["summary"] = "pay\nBob" }), DisplayInvalid, "the summary holds a line break"},
		{"unknown member in answer_by", reencode(t, func(m map[string]any) { m["answer_by"].(map[string]any)["args"] = "x" }), InvalidRequest, "envelope: answer_by holds an unknown member"},
		{"unknown member in display", reencode(t, func(m map[string]any) { display(m)["subtitle"] = "x" }), InvalidRequest, "envelope: display holds an unknown member"},
		{"unknown member in field", reencode(t, func(m map[string]any) { field(m)["href"] = "x" }), InvalidRequest, "envelope: field 1 holds an unknown member"},
		{"unknown member in file", reencode(t, func(m map[string]any) { withFile(m)["path"] = "x" }), InvalidRequest, "envelope: file 1 holds an unknown member"},
		{"missing supplies", reencode(t, func(m map[string]any) { delete(m["answer_by"].(map[string]any), "supplies") }), InvalidRequest, "envelope: answer_by lacks the member supplies"},
		{"missing title", reencode(t, func(m map[string]any) { delete(display(m), "title") }), InvalidRequest, "envelope: display lacks the member title"},
		{"missing values", reencode(t, func(m map[string]any) { delete(field(m), "values") }), InvalidRequest, "envelope: field 1 lacks the member values"},
		{"missing size", reencode(t, func(m map[string]any) { delete(withFile(m), "size") }), InvalidRequest, "envelope: file 1 lacks the member size"},
		{"missing answer_by", reencode(t, func(m map[string]any) { delete(m, "answer_by") }), InvalidRequest, "envelope: answer_by is missing for a task that asks"},
		{"missing reply_pubkey", reencode(t, func(m map[string]any) { delete(m, "reply_pubkey") }), InvalidRequest, "envelope: reply_pubkey is not p256:"},
		{"notice with empty reply_pubkey", reencode(t, func(m map[string]any) {
			delete(m, "answer_by")
			m["kind"] = "notice"
			m["reply_pubkey"] = ""
		}), InvalidRequest, "envelope: reply_pubkey is empty"},
		{"notice with answer_by", reencode(t, func(m map[string]any) { m["kind"] = "notice"; delete(m, "reply_pubkey") }), InvalidRequest, "envelope: a notice names no answer_by"},
		{"title null", reencode(t, func(m map[string]any) { display(m)["title"] = nil }), InvalidRequest, "envelope: display title is not a string"},
		{"title number", reencode(t, func(m map[string]any) { display(m)["title"] = json.Number("7") }), InvalidRequest, "envelope: display title is not a string"},
		{"fields null", reencode(t, func(m map[string]any) { display(m)["fields"] = nil }), InvalidRequest, "envelope: display fields is not an array"},
		{"fields object", reencode(t, func(m map[string]any) { display(m)["fields"] = map[string]any{} }), InvalidRequest, "envelope: display fields is not an array"},
		{"field a string", reencode(t, func(m map[string]any) { display(m)["fields"] = []any{"x"} }), InvalidRequest, "envelope: field 1 is not a JSON object"},
		{"values a string", reencode(t, func(m map[string]any) { field(m)["values"] = "x" }), InvalidRequest, "envelope: field 1 values is not an array"},
		{"value a number", reencode(t, func(m map[string]any) { field(m)["values"] = []any{json.Number("3")} }), InvalidRequest, "envelope: field 1 value 1 is not a string"},
		{"values empty", reencode(t, func(m map[string]any) { field(m)["values"] = []any{} }), DisplayInvalid, "field 1 has no value"},
		{"files null", reencode(t, func(m map[string]any) { m["files"] = nil }), InvalidRequest, "envelope: files is not an array"},
		{"files missing", reencode(t, func(m map[string]any) { delete(m, "files") }), InvalidRequest, "envelope: the envelope lacks the member files"},
		{"size a string", reencode(t, func(m map[string]any) { withFile(m)["size"] = "5" }), InvalidRequest, "envelope: file 1 size is not a whole number"},
		{"size negative", reencode(t, func(m map[string]any) { withFile(m)["size"] = json.Number("-5") }), InvalidRequest, "envelope: file 1 size is not a whole number"},
		{"size fraction", reencode(t, func(m map[string]any) { withFile(m)["size"] = json.Number("5.0") }), InvalidRequest, "envelope: file 1 size is not a whole number"},
		{"size exponent", reencode(t, func(m map[string]any) { withFile(m)["size"] = json.Number("5e3") }), InvalidRequest, "envelope: file 1 size is not a whole number"},
		{"size beyond int64", reencode(t, func(m map[string]any) { withFile(m)["size"] = json.Number("9223372036854775808") }), InvalidRequest, "envelope: file 1 size is not a whole number"},
		{"size too large", reencode(t, func(m map[string]any) { withFile(m)["size"] = json.Number("6291457") }), TaskTooLarge, "the files together are larger than 6 MiB"},
		{"file name path", reencode(t, func(m map[string]any) { withFile(m)["name"] = `..\a` }), DisplayInvalid, "file 1 name"},
		{"created_at a number", reencode(t, func(m map[string]any) { m["created_at"] = json.Number("1796126400") }), InvalidRequest, "envelope: created_at is not a string"},
		{"created_at with fraction", replace(`"2026-11-29T12:00:00Z"`, `"2026-11-29T12:00:00.5Z"`), InvalidRequest, "envelope: created_at is not a time YYYY-MM-DDTHH:MM:SSZ"},
		{"created_at with offset", replace(`"2026-11-29T12:00:00Z"`, `"2026-11-29T12:00:00+00:00"`), InvalidRequest, "envelope: created_at is not a time YYYY-MM-DDTHH:MM:SSZ"},
		{"created_at lowercase z", replace(`"2026-11-29T12:00:00Z"`, `"2026-11-29T12:00:00z"`), InvalidRequest, "envelope: created_at is not a time YYYY-MM-DDTHH:MM:SSZ"},
		{"created_at space", replace(`"2026-11-29T12:00:00Z"`, `"2026-11-29 12:00:00Z"`), InvalidRequest, "envelope: created_at is not a time YYYY-MM-DDTHH:MM:SSZ"},
		{"created_at 30 February", replace(`"2026-11-29T12:00:00Z"`, `"2026-02-30T12:00:00Z"`), InvalidRequest, "envelope: created_at is not a time YYYY-MM-DDTHH:MM:SSZ"},
		{"expires_at hour 24", replace(`"2026-11-30T12:00:00Z"`, `"2026-11-29T24:00:00Z"`), InvalidRequest, "envelope: expires_at is not a time YYYY-MM-DDTHH:MM:SSZ"},
		{"expires_at leap second", replace(`"2026-11-30T12:00:00Z"`, `"2026-11-30T11:59:60Z"`), InvalidRequest, "envelope: expires_at is not a time YYYY-MM-DDTHH:MM:SSZ"},
		{"life too long", replace(`"2026-11-30T12:00:00Z"`, `"2026-11-30T12:00:01Z"`), TaskLifeTooLong, "a task lives at most 24 hours"},
		{"kind unknown", replace(`"kind":"input"`, `"kind":"Input"`), InvalidRequest, "envelope: kind is not one of"},
		{"hash uppercase", replace(`"44136fa3`, `"44136FA3`), InvalidRequest, "envelope: policy_hash is not 64 lowercase hex digits"},
		{"bidi in a value", replace(`Your guess?`, "Your \u202eguess?"), DisplayInvalid, "field 1 value 1 holds a bidirectional control character"},
		{"too large", append([]byte(text), bytes.Repeat([]byte(" "), MaxEnvelopeBytes)...), TaskTooLarge, "the envelope is larger than 262144 bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := ParseEnvelope(c.in)
			if err == nil {
				t.Fatalf("ParseEnvelope accepted it: %+v", e)
			}
			if code := ErrorCode(err); code != c.code {
				t.Fatalf("code = %s, want %s (%v)", code, c.code, err)
			}
			if msg := ErrorMessage(err); !strings.HasPrefix(msg, c.message) {
				t.Fatalf("message = %q, want it to begin %q", msg, c.message)
			}
		})
	}
}

func TestParseEnvelopeSentencesQuoteNothing(t *testing.T) {
	t.Parallel()
	const marker = "MARKER-7f3a"
	text := loadVectors(t).Envelope.Text
	for _, in := range []string{
		strings.Replace(text, "Guess my number", marker+"\u202e", 1),
		strings.Replace(text, `"kind":"input"`, `"kind":"`+marker+`"`, 1),
		strings.Replace(text, `"build":`, `"`+marker+`":1,"build":`, 1),
		strings.Replace(text, `"v":1`, `"v":"`+marker+`"`, 1),
		strings.Replace(text, `"owner":"alice.near"`, `"owner":"`+marker+`"`, 1),
	} {
		_, err := ParseEnvelope([]byte(in))
		if err == nil || strings.Contains(err.Error(), marker) || strings.Contains(err.Error(), strings.ToLower(marker)) {
			t.Errorf("error %v for an input holding the marker", err)
		}
	}
}

func FuzzParseEnvelope(f *testing.F) {
	text := loadVectors(f).Envelope.Text
	f.Add([]byte(text))
	n := noticeEnvelope()
	nb, err := n.Canonical()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(nb)
	r := mrand.New(mrand.NewPCG(3, 4))
	for range 8 {
		e := randomEnvelope(r)
		b, err := e.Canonical()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(strings.Replace(text, `"v":1`, `"v":1,"v":1`, 1)))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseEnvelope(b)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("refusal of type %T", err)
			}
			return
		}
		again, err := e.Canonical()
		if err != nil {
			t.Fatalf("an accepted envelope does not encode: %v", err)
		}
		if !bytes.Equal(again, b) {
			t.Fatalf("an accepted envelope re-encodes differently:\n in %q\nout %q", b, again)
		}
		if want := plainJSON(t, e); !bytes.Equal(want, b) {
			t.Fatalf("an accepted envelope is not what a plain serializer writes:\n in %q\nout %q", b, want)
		}
	})
}

func BenchmarkCanonical(b *testing.B) {
	e := vectorEnvelope()
	for b.Loop() {
		if _, err := e.Canonical(); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseEnvelope(b *testing.B) {
	text := []byte(loadVectors(b).Envelope.Text)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := ParseEnvelope(text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseEnvelopeLarge(b *testing.B) {
	e := vectorEnvelope()
	e.Display.Fields = nil
	for range 4 {
		e.Display.Fields = append(e.Display.Fields, Field{Kind: FieldLongText, Label: "Body", Values: []string{strings.Repeat("The quick brown fox.\n", MaxLongTextChars/21)}, WrittenBy: WrittenByAgent})
	}
	text, err := e.Canonical()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		if _, err := ParseEnvelope(text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSupplyHash(b *testing.B) {
	note, supplied := make([]byte, 200), make([]byte, MaxSuppliedBytes)
	for b.Loop() {
		SupplyHash(note, supplied)
	}
}

func TestNewProjectUUID(t *testing.T) {
	t.Parallel()
	a, b := NewProjectUUID(), NewProjectUUID()
	if !ValidUUID(a) || !ValidUUID(b) || a == b || a[14] != '4' || !strings.ContainsRune("89ab", rune(a[19])) {
		t.Fatalf("NewProjectUUID gave %s and %s", a, b)
	}
}
