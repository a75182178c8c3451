package sealing

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/crypto/chacha20poly1305"
)

var update = flag.Bool("update", false, "rewrite testdata/vectors-local.json from the code")

// contractVectors is the part of the contract's vector file that concerns
// SPEC §9. The file itself is a byte-identical copy of the contract's.
type contractVectors struct {
	Derivation struct {
		MasterKey          hexBytes `json:"master_key"`
		Owner              string   `json:"owner"`
		ProjectUUID        string   `json:"project_uuid"`
		TaskID             string   `json:"task_id"`
		ProjectKey         hexBytes `json:"project_key"`
		TaskKey            hexBytes `json:"task_key"`
		SealKey            hexBytes `json:"seal_key"`
		ReplyKeyN          uint32   `json:"reply_key_n"`
		ReplyPrivateScalar hexBytes `json:"reply_private_scalar"`
		ReplyPubkey        string   `json:"reply_pubkey"`
	} `json:"derivation"`
	Content struct {
		AAD        string   `json:"aad"`
		Blob       hexBytes `json:"blob"`
		ContentKey hexBytes `json:"content_key"`
		Nonce      hexBytes `json:"nonce"`
		Plaintext  string   `json:"plaintext"`
	} `json:"content"`
	File struct {
		AAD        string   `json:"aad"`
		Blob       hexBytes `json:"blob"`
		ContentKey hexBytes `json:"content_key"`
		N          int      `json:"n"`
		Nonce      hexBytes `json:"nonce"`
		Plaintext  hexBytes `json:"plaintext_hex"`
	} `json:"file"`
	SealedCopy struct {
		AAD       string   `json:"aad"`
		Blob      hexBytes `json:"blob"`
		Nonce     hexBytes `json:"nonce"`
		Plaintext string   `json:"plaintext"`
		SealKey   hexBytes `json:"seal_key"`
	} `json:"sealed_copy"`
	DeviceCopy struct {
		AESKey                 hexBytes `json:"aes_key"`
		Blob                   hexBytes `json:"blob"`
		DevicePrivateScalar    hexBytes `json:"device_private_scalar"`
		DevicePubkey           string   `json:"device_pubkey"`
		ECDHX                  hexBytes `json:"ecdh_x"`
		EphemeralPrivateScalar hexBytes `json:"ephemeral_private_scalar"`
		EphemeralPublic        hexBytes `json:"ephemeral_public"`
		HKDFSalt               hexBytes `json:"hkdf_salt"`
		Info                   string   `json:"info"`
		Nonce                  hexBytes `json:"nonce"`
		Plaintext              hexBytes `json:"plaintext_hex"`
	} `json:"device_copy"`
	Answer struct {
		Blob                   hexBytes `json:"blob"`
		EphemeralPrivateScalar hexBytes `json:"ephemeral_private_scalar"`
		Info                   string   `json:"info"`
		Nonce                  hexBytes `json:"nonce"`
		Plaintext              string   `json:"plaintext"`
		ToReplyPubkey          string   `json:"to_reply_pubkey"`
	} `json:"answer"`
	Receipt struct {
		ContentKey hexBytes `json:"content_key"`
		ReceiptKey hexBytes `json:"receipt_key"`
		Request    string   `json:"request"`
		InputSHA   string   `json:"input_sha256"`
		BareSHA    string   `json:"bare_sha256_of_request_must_not_appear"`
	} `json:"receipt"`
}

// hexBytes is a JSON string of lowercase hex.
type hexBytes []byte

func (h *hexBytes) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := hex.DecodeString(s)
	*h = v
	return err
}

func (h hexBytes) MarshalJSON() ([]byte, error) { return json.Marshal(hex.EncodeToString(h)) }

func loadContractVectors(t testing.TB) *contractVectors {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "sealing-and-signing.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v contractVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("vectors: %v", err)
	}
	return &v
}

func vectorKeyring(t testing.TB, v *contractVectors) *Keyring {
	t.Helper()
	kr, err := ParseKeyring("1:" + hex.EncodeToString(v.Derivation.MasterKey))
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

func vectorTaskKeys(t testing.TB, v *contractVectors) *TaskKeys {
	t.Helper()
	d := v.Derivation
	tk, err := vectorKeyring(t, v).TaskKeys(1, d.ProjectUUID, d.Owner, d.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func p256Key(t testing.TB, scalar []byte) *ecdh.PrivateKey {
	t.Helper()
	k, err := ecdh.P256().NewPrivateKey(scalar)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func equalHex(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s:\n got %x\nwant %x", what, got, want)
	}
}

func TestContractDerivation(t *testing.T) {
	t.Parallel()
	v := loadContractVectors(t)
	d := v.Derivation
	master := (*[KeySize]byte)(d.MasterKey)

	pk := projectKey(master, d.ProjectUUID, d.Owner)
	equalHex(t, "project key", pk[:], d.ProjectKey)
	tkey := taskKey(&pk, d.TaskID)
	equalHex(t, "task key", tkey[:], d.TaskKey)
	sk := sealKey(&tkey)
	equalHex(t, "seal key", sk[:], d.SealKey)
	reply, n, err := replyKey(&tkey)
	if err != nil {
		t.Fatal(err)
	}
	if n != d.ReplyKeyN {
		t.Errorf("reply key n = %d, want %d", n, d.ReplyKeyN)
	}
	equalHex(t, "reply scalar", reply.Bytes(), d.ReplyPrivateScalar)

	// The same through the exported API.
	tk := vectorTaskKeys(t, v)
	equalHex(t, "TaskKeys seal key", tk.seal[:], d.SealKey)
	equalHex(t, "TaskKeys reply scalar", tk.ReplyKey().Bytes(), d.ReplyPrivateScalar)
	if got := FormatP256PublicKey(tk.ReplyKey().PublicKey()); got != d.ReplyPubkey {
		t.Errorf("reply pubkey = %s, want %s", got, d.ReplyPubkey)
	}
	if tk.KeyID() != 1 || tk.TaskID() != d.TaskID {
		t.Errorf("TaskKeys names key %d task %q", tk.KeyID(), tk.TaskID())
	}
	pub, err := ParseP256PublicKey(d.ReplyPubkey)
	if err != nil {
		t.Fatal(err)
	}
	if !pub.Equal(tk.ReplyKey().PublicKey()) {
		t.Error("parsed reply pubkey differs from the derived one")
	}
}

func TestContractContent(t *testing.T) {
	t.Parallel()
	v := loadContractVectors(t)
	c := v.Content
	if got := string(ContentAAD(v.Derivation.TaskID)); got != c.AAD {
		t.Errorf("content AAD = %q, want %q", got, c.AAD)
	}
	ck, err := ContentKeyFromBytes(c.ContentKey)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := ck.sealContent(c.Nonce, c.AAD, []byte(c.Plaintext))
	if err != nil {
		t.Fatal(err)
	}
	equalHex(t, "content blob", blob, c.Blob)
	pt, err := ck.OpenContent(c.AAD, c.Blob)
	if err != nil {
		t.Fatal(err)
	}
	if string(pt) != c.Plaintext {
		t.Error("content opened to other bytes")
	}
}

func TestContractFile(t *testing.T) {
	t.Parallel()
	v := loadContractVectors(t)
	f := v.File
	id := v.Derivation.TaskID
	if got := string(FileAAD(id, f.N)); got != f.AAD {
		t.Errorf("file AAD = %q, want %q", got, f.AAD)
	}
	ck, err := ContentKeyFromBytes(f.ContentKey)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := ck.sealFile(f.Nonce, id, f.N, f.Plaintext)
	if err != nil {
		t.Fatal(err)
	}
	equalHex(t, "file blob", blob, f.Blob)
	pt, err := ck.OpenFile(id, f.N, f.Blob)
	if err != nil {
		t.Fatal(err)
	}
	equalHex(t, "file plaintext", pt, f.Plaintext)
}

func TestContractSealedCopy(t *testing.T) {
	t.Parallel()
	v := loadContractVectors(t)
	s := v.SealedCopy
	tk := vectorTaskKeys(t, v)
	equalHex(t, "seal key", tk.seal[:], s.SealKey)
	if got := string(TaskRecord.AAD(tk.TaskID())); got != s.AAD {
		t.Errorf("sealed copy AAD = %q, want %q", got, s.AAD)
	}
	blob, err := tk.sealWithNonce(TaskRecord, s.Nonce, []byte(s.Plaintext))
	if err != nil {
		t.Fatal(err)
	}
	equalHex(t, "sealed copy blob", blob, s.Blob)
	pt, err := tk.Open(TaskRecord, s.Blob)
	if err != nil {
		t.Fatal(err)
	}
	if string(pt) != s.Plaintext {
		t.Error("sealed copy opened to other bytes")
	}

	// The sealed copy names the content key of the content vector.
	var inner struct {
		ContentKey string `json:"content_key"`
	}
	if err := json.Unmarshal(pt, &inner); err != nil {
		t.Fatal(err)
	}
	if inner.ContentKey != hex.EncodeToString(v.Content.ContentKey) {
		t.Error("sealed copy's content key is not the content vector's")
	}
}

func TestContractDeviceCopy(t *testing.T) {
	t.Parallel()
	v := loadContractVectors(t)
	d := v.DeviceCopy
	id := v.Derivation.TaskID
	eph := p256Key(t, d.EphemeralPrivateScalar)
	device := p256Key(t, d.DevicePrivateScalar)

	if got := FormatP256PublicKey(device.PublicKey()); got != d.DevicePubkey {
		t.Errorf("device pubkey = %s, want %s", got, d.DevicePubkey)
	}
	equalHex(t, "ephemeral public", eph.PublicKey().Bytes(), d.EphemeralPublic)
	if got := string(DeviceCopy.Info(id)); got != d.Info {
		t.Errorf("info = %q, want %q", got, d.Info)
	}

	// The intermediate values, from both sides of the agreement.
	x, err := eph.ECDH(device.PublicKey())
	if err != nil {
		t.Fatal(err)
	}
	equalHex(t, "ECDH x", x, d.ECDHX)
	salt := eciesSalt(eph.PublicKey().Bytes(), device.PublicKey().Bytes())
	equalHex(t, "HKDF salt", salt, d.HKDFSalt)
	for _, side := range []struct {
		own  *ecdh.PrivateKey
		peer *ecdh.PublicKey
	}{{eph, device.PublicKey()}, {device, eph.PublicKey()}} {
		key, err := eciesKey(side.own, side.peer, salt, []byte(d.Info))
		if err != nil {
			t.Fatal(err)
		}
		equalHex(t, "AES key", key[:], d.AESKey)
	}

	blob, err := sealTo(eph, d.Nonce, device.PublicKey(), DeviceCopy, id, d.Plaintext)
	if err != nil {
		t.Fatal(err)
	}
	equalHex(t, "device copy blob", blob, d.Blob)

	ck, err := UnwrapContentKey(device, id, d.Blob)
	if err != nil {
		t.Fatal(err)
	}
	equalHex(t, "unwrapped content key", ck.Bytes(), d.Plaintext)
	// And the content of the content vector opens with it.
	if _, err := ck.OpenContent(id, v.Content.Blob); err != nil {
		t.Errorf("content does not open with the unwrapped key: %v", err)
	}
}

func TestContractAnswer(t *testing.T) {
	t.Parallel()
	v := loadContractVectors(t)
	a := v.Answer
	id := v.Derivation.TaskID
	if got := string(Answer.Info(id)); got != a.Info {
		t.Errorf("info = %q, want %q", got, a.Info)
	}
	to, err := ParseP256PublicKey(a.ToReplyPubkey)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := sealTo(p256Key(t, a.EphemeralPrivateScalar), a.Nonce, to, Answer, id, []byte(a.Plaintext))
	if err != nil {
		t.Fatal(err)
	}
	equalHex(t, "answer blob", blob, a.Blob)

	tk := vectorTaskKeys(t, v)
	pt, err := OpenWith(tk.ReplyKey(), Answer, id, a.Blob)
	if err != nil {
		t.Fatal(err)
	}
	if string(pt) != a.Plaintext {
		t.Errorf("answer opened to %q", pt)
	}
}

// TestContractReceipt: a task's receipt key and the keyed input hash of its
// request (SPEC §11, amended), byte for byte; the bare SHA-256 of the
// request is not what a receipt names.
func TestContractReceipt(t *testing.T) {
	t.Parallel()
	v := loadContractVectors(t)
	r := v.Receipt
	if len(r.ReceiptKey) == 0 || r.InputSHA == "" || r.BareSHA == "" {
		t.Fatal("the vectors file lacks the receipt section")
	}
	equalHex(t, "receipt content key", r.ContentKey, v.Content.ContentKey)
	ck, err := ContentKeyFromBytes(r.ContentKey)
	if err != nil {
		t.Fatal(err)
	}
	rk := ck.ReceiptKey()
	equalHex(t, "receipt key", rk.Bytes(), r.ReceiptKey)
	if got := rk.Sum([]byte(r.Request)); got != r.InputSHA {
		t.Errorf("input_sha256 = %s, want %s", got, r.InputSHA)
	}
	if !rk.Verify([]byte(r.Request), r.InputSHA) || rk.Verify([]byte(r.Request+" "), r.InputSHA) || rk.Verify([]byte(r.Request), r.BareSHA) {
		t.Error("Verify does not tell the request's MAC from others")
	}
	bare := sha256.Sum256([]byte(r.Request))
	if hex.EncodeToString(bare[:]) != r.BareSHA {
		t.Errorf("the vector's bare hash is not the SHA-256 of its request")
	}
	if rk.Sum([]byte(r.Request)) == r.BareSHA {
		t.Error("the receipt's input is the bare SHA-256 of the request")
	}
	// The request is the one the content vector seals.
	var content struct{ Request string }
	if err := json.Unmarshal([]byte(v.Content.Plaintext), &content); err != nil || content.Request != r.Request {
		t.Errorf("the receipt's request is not the content vector's: %q %v", content.Request, err)
	}
	// The same key from a key read back from its bytes.
	again, _ := ContentKeyFromBytes(ck.Bytes())
	equalHex(t, "receipt key again", again.ReceiptKey().Bytes(), r.ReceiptKey)
	rk2, err := ReceiptKeyFromBytes(r.ReceiptKey)
	if err != nil || rk2.Sum([]byte(r.Request)) != r.InputSHA {
		t.Errorf("a receipt key read from its bytes: %v", err)
	}
}

// localVectors are fixed-input vectors made by this package for what the
// contract's file does not cover, so another implementation (the browser
// page) can be checked against them. Inputs reuse the contract's where they
// can.
type localVectors struct {
	About     string          `json:"about"`
	Inputs    localInputs     `json:"inputs"`
	Note      localECIES      `json:"note"`
	Rejection localECIES      `json:"rejection"`
	File1     localFile       `json:"file_1"`
	Outcome   localRecord     `json:"outcome"`
	Secret    localSecret     `json:"secret"`
	SecondKey localDerivation `json:"derivation_key_2"`
	Entry     localEntry      `json:"activity_entry"`
}

// localEntry is an entry of the owner's history: its key derived from the
// project key, its body sealed under it, and its device copy sealed to
// inputs.reply_pubkey (standing for a device's key).
type localEntry struct {
	KeyID      uint32   `json:"key_id"`
	ID         string   `json:"id"`
	ProjectKey hexBytes `json:"project_key"`
	EntryKey   hexBytes `json:"entry_key"`
	Info       string   `json:"info"`
	Nonce      hexBytes `json:"nonce"`
	Plaintext  string   `json:"plaintext"`
	Blob       hexBytes `json:"blob"`
	CopyNonce  hexBytes `json:"device_copy_nonce"`
	DeviceCopy hexBytes `json:"device_copy"`
}

type localInputs struct {
	MasterKeyring          string   `json:"master_keyring"`
	ProjectUUID            string   `json:"project_uuid"`
	Owner                  string   `json:"owner"`
	TaskID                 string   `json:"task_id"`
	ContentKey             hexBytes `json:"content_key"`
	EphemeralPrivateScalar hexBytes `json:"ephemeral_private_scalar"`
	ReplyPubkey            string   `json:"reply_pubkey"`
}

type localECIES struct {
	Info      string   `json:"info"`
	Nonce     hexBytes `json:"nonce"`
	Plaintext string   `json:"plaintext"`
	Blob      hexBytes `json:"blob"`
}

type localFile struct {
	N         int      `json:"n"`
	AAD       string   `json:"aad"`
	Nonce     hexBytes `json:"nonce"`
	Plaintext hexBytes `json:"plaintext_hex"`
	Blob      hexBytes `json:"blob"`
}

type localRecord struct {
	KeyID     uint32   `json:"key_id"`
	AAD       string   `json:"aad"`
	Nonce     hexBytes `json:"nonce"`
	Plaintext string   `json:"plaintext"`
	Blob      hexBytes `json:"blob"`
}

type localSecret struct {
	KeyID     uint32        `json:"key_id"`
	Purpose   SecretPurpose `json:"purpose"`
	RowID     string        `json:"row_id"`
	Subkey    hexBytes      `json:"subkey"`
	AAD       string        `json:"aad"`
	Nonce     hexBytes      `json:"nonce"`
	Plaintext string        `json:"plaintext"`
	Blob      hexBytes      `json:"blob"`
}

type localDerivation struct {
	KeyID              uint32   `json:"key_id"`
	TaskID             string   `json:"task_id"`
	SealKey            hexBytes `json:"seal_key"`
	ReplyPrivateScalar hexBytes `json:"reply_private_scalar"`
	ReplyPubkey        string   `json:"reply_pubkey"`
}

// Fixed inputs of the local vectors.
const (
	localMaster2 = "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	localTask2   = "r7k2m9q4x1z8c3v6b5n0p2w4s6-2"
)

func fixedBytes(start byte, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

// makeLocalVectors computes every local vector from its fixed inputs.
func makeLocalVectors(t testing.TB) *localVectors {
	t.Helper()
	cv := loadContractVectors(t)
	d := cv.Derivation
	in := localInputs{
		MasterKeyring:          "1:" + hex.EncodeToString(d.MasterKey) + ",2:" + localMaster2,
		ProjectUUID:            d.ProjectUUID,
		Owner:                  d.Owner,
		TaskID:                 d.TaskID,
		ContentKey:             cv.Content.ContentKey,
		EphemeralPrivateScalar: cv.Answer.EphemeralPrivateScalar,
		ReplyPubkey:            d.ReplyPubkey,
	}
	kr, err := ParseKeyring(in.MasterKeyring)
	if err != nil {
		t.Fatal(err)
	}
	eph := p256Key(t, in.EphemeralPrivateScalar)
	reply, err := ParseP256PublicKey(in.ReplyPubkey)
	if err != nil {
		t.Fatal(err)
	}
	ecies := func(p Purpose, nonce []byte, text string) localECIES {
		blob, err := sealTo(eph, nonce, reply, p, in.TaskID, []byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return localECIES{Info: string(p.Info(in.TaskID)), Nonce: nonce, Plaintext: text, Blob: blob}
	}
	ck, err := ContentKeyFromBytes(in.ContentKey)
	if err != nil {
		t.Fatal(err)
	}
	fileNonce, filePlain := fixedBytes(0xd0, 12), []byte("second file: ünïcode, tab\tand newline\n")
	fileBlob, err := ck.sealFile(fileNonce, in.TaskID, 1, filePlain)
	if err != nil {
		t.Fatal(err)
	}
	tk1, err := kr.TaskKeys(1, in.ProjectUUID, in.Owner, in.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	outNonce, outPlain := fixedBytes(0xe0, 24), `{"attempt":1,"detail":"too low","guess":3,"max":10,"verdict":"higher"}`
	outBlob, err := tk1.sealWithNonce(OutcomeRecord, outNonce, []byte(outPlain))
	if err != nil {
		t.Fatal(err)
	}
	secNonce, secPlain, row := fixedBytes(0xf0, 24), "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "owner:alice.near"
	secID, secBlob, err := kr.sealSecret(secNonce, WebhookSecret, row, []byte(secPlain))
	if err != nil {
		t.Fatal(err)
	}
	master2, err := kr.key(2)
	if err != nil {
		t.Fatal(err)
	}
	tk2, err := kr.TaskKeys(2, in.ProjectUUID, in.Owner, localTask2)
	if err != nil {
		t.Fatal(err)
	}
	master1, err := kr.key(1)
	if err != nil {
		t.Fatal(err)
	}
	pk1 := projectKey(master1, in.ProjectUUID, in.Owner)
	ek, err := kr.EntryKey(1, in.ProjectUUID, in.Owner, in.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	entryNonce := fixedBytes(0xa0, 12)
	entryPlain := `{"result":{"text":"Committed 3f2a9c1 to main","url":"https://github.com/octo/app/commit/3f2a9c1"},"summary":"commit 2 files to main of octo/app","title":"Commit to octo/app"}`
	entryBlob, err := ek.seal(entryNonce, []byte(entryPlain))
	if err != nil {
		t.Fatal(err)
	}
	copyNonce := fixedBytes(0x90, 12)
	entryCopy, err := sealTo(eph, copyNonce, reply, Activity, in.TaskID, ek.key[:])
	if err != nil {
		t.Fatal(err)
	}
	return &localVectors{
		About: "Fixed-input vectors made by package sealing for SPEC §9 cases the contract's vectors do not cover. " +
			"Hex unless a field says otherwise. ECIES blobs are sealed to inputs.reply_pubkey (the contract's reply key) " +
			"with inputs.ephemeral_private_scalar; file and outcome use inputs.content_key and master key 1; " +
			"the secret is sealed under master key 2 (the keyring's current one) with subkey = HMAC-SHA256(master, \"secret:v1:{purpose}\") " +
			"and AAD \"countersign-secret:v1:{purpose}:{row_id}\". " +
			"A history entry's key is HMAC-SHA256(project key, \"activity:\" ‖ id) under master key 1, its body AES-256-GCM " +
			"0x01 ‖ nonce(12) ‖ ct ‖ tag with AAD = info, its device copy the key's 32 bytes sealed to inputs.reply_pubkey as the note is, with info " +
			"\"countersign-task:v1:activity:{id}\".",
		Inputs:    in,
		Note:      ecies(Note, fixedBytes(0xb0, 12), "Please use the staging branch."),
		Rejection: ecies(Rejection, fixedBytes(0xc0, 12), "Not this week — the budget is closed."),
		File1:     localFile{N: 1, AAD: string(FileAAD(in.TaskID, 1)), Nonce: fileNonce, Plaintext: filePlain, Blob: fileBlob},
		Outcome:   localRecord{KeyID: 1, AAD: string(OutcomeRecord.AAD(in.TaskID)), Nonce: outNonce, Plaintext: outPlain, Blob: outBlob},
		Secret: localSecret{
			KeyID: secID, Purpose: WebhookSecret, RowID: row,
			Subkey: secretKey(master2, WebhookSecret)[:], AAD: string(SecretAAD(WebhookSecret, row)),
			Nonce: secNonce, Plaintext: secPlain, Blob: secBlob,
		},
		SecondKey: localDerivation{
			KeyID: 2, TaskID: localTask2, SealKey: tk2.seal[:],
			ReplyPrivateScalar: tk2.ReplyKey().Bytes(),
			ReplyPubkey:        FormatP256PublicKey(tk2.ReplyKey().PublicKey()),
		},
		Entry: localEntry{KeyID: 1, ID: in.TaskID, ProjectKey: pk1[:], EntryKey: ek.key[:], Info: string(EntryInfo(in.TaskID)),
			Nonce: entryNonce, Plaintext: entryPlain, Blob: entryBlob, CopyNonce: copyNonce, DeviceCopy: entryCopy},
	}
}

func TestLocalVectors(t *testing.T) {
	t.Parallel()
	path := filepath.Join("testdata", "vectors-local.json")
	made := makeLocalVectors(t)
	text, err := json.MarshalIndent(made, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	text = append(text, '\n')
	if *update {
		if err := os.WriteFile(path, text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	stored, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -run TestLocalVectors -update to make it)", err)
	}
	if !bytes.Equal(stored, text) {
		t.Fatalf("the code no longer reproduces %s; if the change is intended, rerun with -update and say why in the commit", path)
	}

	// Every stored blob opens through the exported API.
	var v localVectors
	if err := json.Unmarshal(stored, &v); err != nil {
		t.Fatal(err)
	}
	in := v.Inputs
	kr, err := ParseKeyring(in.MasterKeyring)
	if err != nil {
		t.Fatal(err)
	}
	tk1, err := kr.TaskKeys(1, in.ProjectUUID, in.Owner, in.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p Purpose
		v localECIES
	}{{Note, v.Note}, {Rejection, v.Rejection}} {
		pt, err := OpenWith(tk1.ReplyKey(), c.p, in.TaskID, c.v.Blob)
		if err != nil || string(pt) != c.v.Plaintext {
			t.Errorf("%s: opened %q, %v", c.p, pt, err)
		}
	}
	ck, err := ContentKeyFromBytes(in.ContentKey)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := ck.OpenFile(in.TaskID, v.File1.N, v.File1.Blob); err != nil || !bytes.Equal(pt, v.File1.Plaintext) {
		t.Errorf("file 1: opened %q, %v", pt, err)
	}
	if pt, err := tk1.Open(OutcomeRecord, v.Outcome.Blob); err != nil || string(pt) != v.Outcome.Plaintext {
		t.Errorf("outcome: opened %q, %v", pt, err)
	}
	if v.Secret.KeyID != kr.Current() {
		t.Errorf("secret sealed under key %d, want the current %d", v.Secret.KeyID, kr.Current())
	}
	if pt, err := kr.Open(v.Secret.KeyID, v.Secret.Purpose, v.Secret.RowID, v.Secret.Blob); err != nil || string(pt) != v.Secret.Plaintext {
		t.Errorf("secret: opened %q, %v", pt, err)
	}
	tk2, err := kr.TaskKeys(2, in.ProjectUUID, in.Owner, v.SecondKey.TaskID)
	if err != nil {
		t.Fatal(err)
	}
	if got := FormatP256PublicKey(tk2.ReplyKey().PublicKey()); got != v.SecondKey.ReplyPubkey {
		t.Errorf("key 2 reply pubkey = %s, want %s", got, v.SecondKey.ReplyPubkey)
	}
	ek, err := UnwrapEntryKey(tk1.ReplyKey(), v.Entry.ID, v.Entry.DeviceCopy)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := ek.Open(v.Entry.Blob); err != nil || string(pt) != v.Entry.Plaintext {
		t.Errorf("entry: opened %q, %v", pt, err)
	}
}

// TestLocalVectorsByHand opens the local vectors with the standard library
// and x/crypto directly, from their documented layout, so that the file
// does not merely agree with the code that wrote it.
func TestLocalVectorsByHand(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("testdata", "vectors-local.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v localVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	cv := loadContractVectors(t)

	// Secret: HMAC subkey, then XChaCha20-Poly1305 over 0x01 ‖ nonce(24) ‖ ct ‖ tag.
	master2, _ := hex.DecodeString(localMaster2)
	mac := hmac.New(sha256.New, master2)
	mac.Write([]byte("secret:v1:" + string(v.Secret.Purpose)))
	equalHex(t, "secret subkey", mac.Sum(nil), v.Secret.Subkey)
	if want := "countersign-secret:v1:" + string(v.Secret.Purpose) + ":" + v.Secret.RowID; v.Secret.AAD != want {
		t.Errorf("secret AAD = %q, want %q", v.Secret.AAD, want)
	}
	x, err := chacha20poly1305.NewX(v.Secret.Subkey)
	if err != nil {
		t.Fatal(err)
	}
	if v.Secret.Blob[0] != 0x01 || !bytes.Equal(v.Secret.Blob[1:25], v.Secret.Nonce) {
		t.Fatal("secret blob does not start with 0x01 ‖ nonce")
	}
	pt, err := x.Open(nil, v.Secret.Nonce, v.Secret.Blob[25:], []byte(v.Secret.AAD))
	if err != nil || string(pt) != v.Secret.Plaintext {
		t.Errorf("secret by hand: %q, %v", pt, err)
	}

	// Note and rejection: ECDH x, HKDF-SHA256, AES-256-GCM with AAD = info.
	reply := p256Key(t, cv.Derivation.ReplyPrivateScalar)
	for _, e := range []localECIES{v.Note, v.Rejection} {
		blob := e.Blob
		if blob[0] != 0x01 || !bytes.Equal(blob[66:78], e.Nonce) {
			t.Fatalf("%s: blob does not start with 0x01 ‖ ephemeral ‖ nonce", e.Info)
		}
		eph, err := ecdh.P256().NewPublicKey(blob[1:66])
		if err != nil {
			t.Fatal(err)
		}
		shared, err := reply.ECDH(eph)
		if err != nil {
			t.Fatal(err)
		}
		salt := append(append([]byte{}, blob[1:66]...), reply.PublicKey().Bytes()...)
		key, err := hkdf.Key(sha256.New, shared, salt, e.Info, 32)
		if err != nil {
			t.Fatal(err)
		}
		block, err := aes.NewCipher(key)
		if err != nil {
			t.Fatal(err)
		}
		gcm, err := cipher.NewGCM(block)
		if err != nil {
			t.Fatal(err)
		}
		pt, err := gcm.Open(nil, e.Nonce, blob[78:], []byte(e.Info))
		if err != nil || string(pt) != e.Plaintext {
			t.Errorf("%s by hand: %q, %v", e.Info, pt, err)
		}
	}

	// File 1: AES-256-GCM under the content key, AAD "{id}:file:1".
	block, err := aes.NewCipher(v.Inputs.ContentKey)
	if err != nil {
		t.Fatal(err)
	}
	gcm, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	if want := v.Inputs.TaskID + ":file:1"; v.File1.AAD != want {
		t.Errorf("file AAD = %q, want %q", v.File1.AAD, want)
	}
	pt, err = gcm.Open(nil, v.File1.Blob[1:13], v.File1.Blob[13:], []byte(v.File1.AAD))
	if err != nil || !bytes.Equal(pt, v.File1.Plaintext) || v.File1.Blob[0] != 0x01 {
		t.Errorf("file 1 by hand: %q, %v", pt, err)
	}

	// History entry: project key as SPEC §9, entry key = HMAC-SHA256(project
	// key, "activity:" ‖ id), body AES-256-GCM with AAD = info.
	mac = hmac.New(sha256.New, cv.Derivation.MasterKey)
	mac.Write([]byte("task-key:v1:" + v.Inputs.ProjectUUID + ":" + v.Inputs.Owner))
	equalHex(t, "entry's project key", mac.Sum(nil), v.Entry.ProjectKey)
	mac = hmac.New(sha256.New, v.Entry.ProjectKey)
	mac.Write([]byte("activity:" + v.Entry.ID))
	equalHex(t, "entry key", mac.Sum(nil), v.Entry.EntryKey)
	if want := "countersign-task:v1:activity:" + v.Entry.ID; v.Entry.Info != want {
		t.Errorf("entry info = %q, want %q", v.Entry.Info, want)
	}
	block, err = aes.NewCipher(v.Entry.EntryKey)
	if err != nil {
		t.Fatal(err)
	}
	if gcm, err = cipher.NewGCM(block); err != nil {
		t.Fatal(err)
	}
	pt, err = gcm.Open(nil, v.Entry.Blob[1:13], v.Entry.Blob[13:], []byte(v.Entry.Info))
	if err != nil || string(pt) != v.Entry.Plaintext || v.Entry.Blob[0] != 0x01 || !bytes.Equal(v.Entry.Blob[1:13], v.Entry.Nonce) {
		t.Errorf("entry by hand: %q, %v", pt, err)
	}
	blob := v.Entry.DeviceCopy
	eph, err := ecdh.P256().NewPublicKey(blob[1:66])
	if err != nil {
		t.Fatal(err)
	}
	shared, err := reply.ECDH(eph)
	if err != nil {
		t.Fatal(err)
	}
	salt := append(append([]byte{}, blob[1:66]...), reply.PublicKey().Bytes()...)
	key, err := hkdf.Key(sha256.New, shared, salt, v.Entry.Info, 32)
	if err != nil {
		t.Fatal(err)
	}
	if block, err = aes.NewCipher(key); err != nil {
		t.Fatal(err)
	}
	if gcm, err = cipher.NewGCM(block); err != nil {
		t.Fatal(err)
	}
	pt, err = gcm.Open(nil, blob[66:78], blob[78:], []byte(v.Entry.Info))
	if err != nil || !bytes.Equal(pt, v.Entry.EntryKey) || !bytes.Equal(blob[66:78], v.Entry.CopyNonce) {
		t.Errorf("entry's device copy by hand: %x, %v", pt, err)
	}
}
