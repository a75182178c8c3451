package web_test

import (
	"bytes"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"

	"countersign"
	"countersign/client"
	"countersign/device"
	"countersign/sealing"
)

// vectorFile is the contract's vectors, as the repository's root keeps them.
const vectorFile = "../testdata/sealing-and-signing.json"

type vectors struct {
	Derivation struct {
		TaskID string `json:"task_id"`
	} `json:"derivation"`
	DeviceCopy struct {
		Blob         string `json:"blob"`
		Info         string `json:"info"`
		PlaintextHex string `json:"plaintext_hex"`
		DevicePubkey string `json:"device_pubkey"`
	} `json:"device_copy"`
	Content struct {
		Plaintext string `json:"plaintext"`
	} `json:"content"`
	Envelope struct {
		Text     string `json:"text"`
		TaskHash string `json:"task_hash"`
	} `json:"envelope"`
	File struct {
		AAD          string `json:"aad"`
		PlaintextHex string `json:"plaintext_hex"`
	} `json:"file"`
	Receipt struct {
		ReceiptKey  string `json:"receipt_key"`
		InputSHA256 string `json:"input_sha256"`
		Bare        string `json:"bare_sha256_of_request_must_not_appear"`
	} `json:"receipt"`
	Answer struct {
		Blob      string `json:"blob"`
		Info      string `json:"info"`
		Plaintext string `json:"plaintext"`
	} `json:"answer"`
	SupplyHash []struct {
		Hash string `json:"hash"`
	} `json:"supply_hash"`
}

// TestBrowserVectors: the shipped bundle, in Chromium, makes and opens the
// contract's fixed-input vectors byte for byte: the device copy and the
// owner's answer sealed again from their fixed ephemeral keys and nonces,
// the device copy, content, file and answer opened, the envelope's exact
// bytes and task hash, the receipt key and keyed input hash, the supply
// hashes, and a listed task opened whole and refused when the listing
// disagrees with its envelope.
func TestBrowserVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile(vectorFile)
	if err != nil {
		t.Fatal(err)
	}
	var v vectors
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var all any
	if err := json.Unmarshal(raw, &all); err != nil {
		t.Fatal(err)
	}
	ctx := tab(t)
	var got struct {
		DeviceKeyExtractable bool              `json:"device_key_extractable"`
		DevicePubkey         string            `json:"device_pubkey"`
		DeviceCopyInfo       string            `json:"device_copy_info"`
		DeviceCopyPlaintext  string            `json:"device_copy_plaintext"`
		DeviceCopyBlob       string            `json:"device_copy_blob"`
		ContentPlaintext     string            `json:"content_plaintext"`
		EnvelopeText         string            `json:"envelope_text"`
		RequestText          string            `json:"request_text"`
		TaskHash             string            `json:"task_hash"`
		ChainPlaintext       string            `json:"chain_plaintext"`
		FileAAD              string            `json:"file_aad"`
		FilePlaintext        string            `json:"file_plaintext"`
		ReceiptKey           string            `json:"receipt_key"`
		ReceiptInput         string            `json:"receipt_input"`
		ReceiptVerifies      bool              `json:"receipt_verifies"`
		ReceiptBareVerifies  bool              `json:"receipt_bare_verifies"`
		ReceiptBareDiffers   bool              `json:"receipt_bare_differs"`
		AnswerInfo           string            `json:"answer_info"`
		AnswerBlob           string            `json:"answer_blob"`
		AnswerPlaintext      string            `json:"answer_plaintext"`
		SupplyHashes         []string          `json:"supply_hashes"`
		OpenedTaskHash       string            `json:"opened_task_hash"`
		OpenedEnvelope       string            `json:"opened_envelope"`
		OpenedReplyPubkey    string            `json:"opened_reply_pubkey"`
		OpenRefusals         map[string]string `json:"open_refusals"`
	}
	call(t, ctx, "vectors", all, &got)

	// The request the content vector carries, as Go's device reads it.
	var content struct{ Envelope, Request string }
	if err := json.Unmarshal([]byte(v.Content.Plaintext), &content); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, got, want string }{
		{"device pubkey", got.DevicePubkey, v.DeviceCopy.DevicePubkey},
		{"device copy info", got.DeviceCopyInfo, v.DeviceCopy.Info},
		{"device copy opened", got.DeviceCopyPlaintext, v.DeviceCopy.PlaintextHex},
		{"device copy sealed", got.DeviceCopyBlob, v.DeviceCopy.Blob},
		{"content opened", got.ContentPlaintext, v.Content.Plaintext},
		{"envelope bytes", got.EnvelopeText, v.Envelope.Text},
		{"request bytes", got.RequestText, content.Request},
		{"task hash", got.TaskHash, v.Envelope.TaskHash},
		{"content opened through the device copy", got.ChainPlaintext, v.Content.Plaintext},
		{"file aad", got.FileAAD, v.File.AAD},
		{"file opened", got.FilePlaintext, v.File.PlaintextHex},
		{"receipt key", got.ReceiptKey, v.Receipt.ReceiptKey},
		{"receipt input hash", got.ReceiptInput, v.Receipt.InputSHA256},
		{"answer info", got.AnswerInfo, v.Answer.Info},
		{"answer sealed", got.AnswerBlob, v.Answer.Blob},
		{"answer opened", got.AnswerPlaintext, v.Answer.Plaintext},
		{"opened task's hash", got.OpenedTaskHash, v.Envelope.TaskHash},
		{"opened task's envelope", got.OpenedEnvelope, v.Envelope.Text},
		{"opened task's reply key", got.OpenedReplyPubkey, "p256:BJ2z-w1j_wj1qPuly_dPzTs2OcM1NTDUnWfy2nUEc7_1ZAbq4s1pbL9SbuBcADbnKV1lXcYFiWToD_qv6xwJyEQ"},
	} {
		if c.got != c.want {
			t.Errorf("%s: the page has\n%s\nthe vector\n%s", c.what, c.got, c.want)
		}
	}
	if got.DeviceKeyExtractable {
		t.Error("an imported device key is extractable")
	}
	if !got.ReceiptVerifies || got.ReceiptBareVerifies || !got.ReceiptBareDiffers {
		t.Errorf("receipt: keyed hash verifies %v, bare hash verifies %v, keyed differs from bare %v; want true, false, true",
			got.ReceiptVerifies, got.ReceiptBareVerifies, got.ReceiptBareDiffers)
	}
	if len(got.SupplyHashes) != len(v.SupplyHash) || len(v.SupplyHash) == 0 {
		t.Fatalf("supply hashes: the page made %d for %d vectors", len(got.SupplyHashes), len(v.SupplyHash))
	}
	for i, s := range v.SupplyHash {
		if got.SupplyHashes[i] != s.Hash {
			t.Errorf("supply hash %d: the page has %s, the vector %s", i, got.SupplyHashes[i], s.Hash)
		}
	}
	wantRefusals := map[string]string{
		"other_preparer": "mismatch",
		"other_owner":    "mismatch",
		"other_expiry":   "mismatch",
		"other_hash":     "hash_mismatch",
		"other_id":       "unreadable", // the device copy is bound to the task id
		"locked":         "locked",
		"closed":         "not_waiting",
		"no_copy":        "locked",
	}
	if !reflect.DeepEqual(got.OpenRefusals, wantRefusals) {
		t.Errorf("opening a listed task that disagrees: the page says %v, want %v", got.OpenRefusals, wantRefusals)
	}
}

// liveTask is a task Go sealed with fresh random keys to the page's device
// key, as the enclave opens one.
type liveTask struct {
	ID           string   `json:"id"`
	OtherID      string   `json:"other_id"`
	DeviceCopy   string   `json:"device_copy"`
	Content      string   `json:"content"`
	Files        []string `json:"files"`
	ReceiptInput string   `json:"receipt_input"`
	// View is the task as the inbox lists it (without content and copy).
	View    map[string]any `json:"view"`
	Account string         `json:"account"`

	envelope, request []byte
	files             [][]byte
	key               *sealing.ContentKey
}

// sealLive makes a device key in the page and a task sealed to it by Go.
func sealLive(t testing.TB, pubkey string) liveTask {
	t.Helper()
	device, err := sealing.ParseP256PublicKey(pubkey)
	if err != nil {
		t.Fatalf("Go does not read the page's device key %q: %v", pubkey, err)
	}
	id := "t" + strings.ToLower(hex.EncodeToString(randomBytes(t, 8))) + "-1"
	key := sealing.NewContentKey()
	lt := liveTask{ID: id, OtherID: id + "0", key: key}
	var listed []string
	for n, f := range [][]byte{randomBytes(t, 3000), {}, []byte("%PDF-1.7 stand-in")} {
		blob, err := key.SealFile(id, n, f)
		if err != nil {
			t.Fatal(err)
		}
		lt.Files = append(lt.Files, b64(blob))
		lt.files = append(lt.files, f)
		sum := sha256.Sum256(f)
		listed = append(listed, fmt.Sprintf(`{"content_type":"application/octet-stream","name":"f%d.bin","sha256":"%x","size":%d}`, n, sum, len(f)))
	}
	reply := sealing.FormatP256PublicKey(newP256(t).PublicKey())
	lt.View = map[string]any{
		"id": id, "kind": "confirm", "preparer": "bot.near", "project": "pay", "project_uuid": "0b7c9a52-3c1e-4d7a-9f00-5e2d1c4b6a80",
		"thread": id, "created_at": "2026-12-01T10:00:00Z", "expires_at": "2026-12-02T10:00:00Z", "reply_pubkey": reply,
	}
	lt.Account = "alice.near"
	// An envelope with what JSON escapes and what UTF-8 spells in several
	// bytes; Go's encoder writes <, > and & as \u003c… in the content.
	lt.envelope = []byte(`{"answer_by":{"operation":"pay","supplies":"none"},"created_at":"2026-12-01T10:00:00Z",` +
		`"display":{"title":"Pay <Bob> & Co — 12 € ✓ 🤖 \"quoted\" \\ tab\t"},"expires_at":"2026-12-02T10:00:00Z",` +
		`"files":[` + strings.Join(listed, ",") + `],"id":"` + id + `","kind":"confirm","owner":"alice.near",` +
		`"preparer":"bot.near","project":"pay","project_uuid":"0b7c9a52-3c1e-4d7a-9f00-5e2d1c4b6a80",` +
		`"reply_pubkey":"` + reply + `","thread":"` + id + `","v":1}`)
	lt.request = []byte(`{"operation":"pay","amount":"12.00","memo":"ünïcødé\n"}`)
	plain, err := json.Marshal(map[string]string{"envelope": string(lt.envelope), "request": string(lt.request)})
	if err != nil {
		t.Fatal(err)
	}
	copyBlob, err := sealing.WrapContentKey(device, id, key)
	if err != nil {
		t.Fatal(err)
	}
	contentBlob, err := key.SealContent(id, plain)
	if err != nil {
		t.Fatal(err)
	}
	lt.DeviceCopy, lt.Content = b64(copyBlob), b64(contentBlob)
	lt.ReceiptInput = key.ReceiptKey().Sum(lt.request)
	lt.View["task_hash"] = countersign.TaskHash(lt.envelope)
	return lt
}

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

type newDevice struct {
	Pubkey      string   `json:"pubkey"`
	Extractable bool     `json:"extractable"`
	Type        string   `json:"type"`
	Usages      []string `json:"usages"`
}

// TestBrowserOpensWhatGoSeals: a device key the page makes is a
// non-extractable P-256 ECDH key Go reads; what Go's sealing wraps and
// encrypts to it with random keys and nonces the page opens to the same
// bytes: the content key (through the content it opens), the envelope's
// exact bytes and their task hash, the request, the files (an empty one
// too), and the receipt's keyed input hash.
func TestBrowserOpensWhatGoSeals(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	var dev newDevice
	call(t, ctx, "newDevice", nil, &dev)
	if dev.Extractable || dev.Type != "private" || !reflect.DeepEqual(dev.Usages, []string{"deriveBits"}) {
		t.Fatalf("the page's device key: extractable %v, type %q, usages %v; want a non-extractable private key for deriveBits only",
			dev.Extractable, dev.Type, dev.Usages)
	}
	lt := sealLive(t, dev.Pubkey)
	var got struct {
		Envelope        string   `json:"envelope"`
		Request         string   `json:"request"`
		TaskHash        string   `json:"task_hash"`
		ReceiptInput    string   `json:"receipt_input"`
		ReceiptVerifies bool     `json:"receipt_verifies"`
		Files           []string `json:"files"`
		OpenedHash      string   `json:"opened_task_hash"`
		TaskFiles       []string `json:"task_files"`
		FileRefused     []bool   `json:"file_refused"`
	}
	call(t, ctx, "open", lt, &got)
	if got.OpenedHash != countersign.TaskHash(lt.envelope) {
		t.Errorf("the listed task opened whole hashes to %s, Go %s", got.OpenedHash, countersign.TaskHash(lt.envelope))
	}
	if len(got.TaskFiles) != len(lt.files) || !reflect.DeepEqual(got.TaskFiles, got.Files) {
		t.Errorf("files checked against the envelope: %d opened, the same bytes as opened bare %v",
			len(got.TaskFiles), reflect.DeepEqual(got.TaskFiles, got.Files))
	}
	if !reflect.DeepEqual(got.FileRefused, []bool{true, true, true}) {
		t.Errorf("a file given as another number, a file the envelope does not name, a file changed: refused %v, want all", got.FileRefused)
	}
	if got.Envelope != hex.EncodeToString(lt.envelope) {
		t.Errorf("envelope bytes: the page has %s, Go sealed %x", got.Envelope, lt.envelope)
	}
	if got.Request != hex.EncodeToString(lt.request) {
		t.Errorf("request bytes: the page has %s, Go sealed %x", got.Request, lt.request)
	}
	if want := countersign.TaskHash(lt.envelope); got.TaskHash != want {
		t.Errorf("task hash: the page has %s, Go %s", got.TaskHash, want)
	}
	if got.ReceiptInput != lt.ReceiptInput || !got.ReceiptVerifies {
		t.Errorf("receipt input hash: the page has %s (verifies %v), Go %s", got.ReceiptInput, got.ReceiptVerifies, lt.ReceiptInput)
	}
	if len(got.Files) != len(lt.files) {
		t.Fatalf("the page opened %d files of %d", len(got.Files), len(lt.files))
	}
	for n, f := range lt.files {
		if got.Files[n] != hex.EncodeToString(f) {
			t.Errorf("file %d: the page opened other bytes than Go sealed", n)
		}
	}
}

// TestGoOpensWhatBrowserSeals: an answer (file bytes), a note and a
// rejection reason the page seals to a Go-made reply key open with Go's
// sealing for exactly their purpose and task, to the same bytes; the
// page's supply hash is Go's over the same sealed bytes; a blob opened for
// another purpose or task, or changed by one bit, does not open; and the
// page holds a reply to the service's 8 KiB of sealed bytes.
func TestGoOpensWhatBrowserSeals(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	reply := newP256(t)
	id := "r" + hex.EncodeToString(randomBytes(t, 6)) + "-2"
	answer := randomBytes(t, 1000)
	note := "Pay it — but only this once ✓ 🤖"
	reason := "Not this month.\nAsk me again in January."
	var got struct {
		Answer               string `json:"answer"`
		Note                 string `json:"note"`
		Reason               string `json:"reason"`
		SupplyHash           string `json:"supply_hash"`
		SupplyHashAnswerOnly string `json:"supply_hash_answer_only"`
		TooLarge             bool   `json:"too_large"`
		Largest              int    `json:"largest"`
	}
	call(t, ctx, "seal", map[string]string{
		"reply_pubkey": sealing.FormatP256PublicKey(reply.PublicKey()),
		"id":           id, "answer": b64(answer), "note": note, "reason": reason,
	}, &got)
	blobs := map[sealing.Purpose][]byte{
		sealing.Answer: unb64(t, got.Answer), sealing.Note: unb64(t, got.Note), sealing.Rejection: unb64(t, got.Reason),
	}
	want := map[sealing.Purpose][]byte{sealing.Answer: answer, sealing.Note: []byte(note), sealing.Rejection: []byte(reason)}
	for p, blob := range blobs {
		plain, err := sealing.OpenWith(reply, p, id, blob)
		if err != nil {
			t.Errorf("%s: Go does not open what the page sealed: %v", p, err)
			continue
		}
		if !bytes.Equal(plain, want[p]) {
			t.Errorf("%s: Go opened other bytes than the page sealed", p)
		}
		if len(blob) != len(want[p])+1+65+12+16 {
			t.Errorf("%s: the page's blob is %d bytes for %d of plaintext", p, len(blob), len(want[p]))
		}
		// Tamper: another purpose, another task, another key, one bit changed.
		for _, other := range []sealing.Purpose{sealing.Answer, sealing.Note, sealing.Rejection, sealing.DeviceCopy} {
			if other == p {
				continue
			}
			if _, err := sealing.OpenWith(reply, other, id, blob); !errors.Is(err, sealing.ErrDecrypt) {
				t.Errorf("%s opened as %s: %v, want ErrDecrypt", p, other, err)
			}
		}
		if _, err := sealing.OpenWith(reply, p, id+"x", blob); !errors.Is(err, sealing.ErrDecrypt) {
			t.Errorf("%s opened for another task: %v, want ErrDecrypt", p, err)
		}
		if _, err := sealing.OpenWith(newP256(t), p, id, blob); !errors.Is(err, sealing.ErrDecrypt) {
			t.Errorf("%s opened with another key: %v, want ErrDecrypt", p, err)
		}
		for _, i := range []int{0, 1, 70, 80, len(blob) - 1} {
			bad := bytes.Clone(blob)
			bad[i] ^= 0x01
			if _, err := sealing.OpenWith(reply, p, id, bad); !errors.Is(err, sealing.ErrDecrypt) {
				t.Errorf("%s with byte %d changed: %v, want ErrDecrypt", p, i, err)
			}
		}
	}
	if w := countersign.SupplyHash(blobs[sealing.Note], blobs[sealing.Answer]); got.SupplyHash != w {
		t.Errorf("supply hash: the page has %s, Go %s", got.SupplyHash, w)
	}
	if w := countersign.SupplyHash(nil, blobs[sealing.Answer]); got.SupplyHashAnswerOnly != w {
		t.Errorf("supply hash without a note: the page has %s, Go %s", got.SupplyHashAnswerOnly, w)
	}
	if !got.TooLarge || got.Largest != countersign.MaxSuppliedBytes {
		t.Errorf("limit: one byte too many refused %v, the largest answer seals to %d bytes; want true, %d",
			got.TooLarge, got.Largest, countersign.MaxSuppliedBytes)
	}
}

// TestBrowserRefusesTampered: a device copy, content, file or receipt hash
// changed by one bit, cut short, with another version byte, or opened for
// another task, purpose, file number or device, is refused by the page.
func TestBrowserRefusesTampered(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	var dev newDevice
	call(t, ctx, "newDevice", nil, &dev)
	lt := sealLive(t, dev.Pubkey)
	var got map[string]bool
	call(t, ctx, "tamper", lt, &got)
	if len(got) < 16 {
		t.Fatalf("the harness ran %d tamper cases: %v", len(got), got)
	}
	for c, ok := range got {
		if !ok {
			t.Errorf("tampered %s: the page did not refuse it", c)
		}
	}
}

// TestBrowserParsesStrictly: the page reads a content plaintext and a
// "p256:" key as strictly as Go does.
func TestBrowserParsesStrictly(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	// A key whose base64url spells '-' or '_', to write in the standard
	// alphabet; its point with y+1, off the curve; a trailing bit set.
	var pub []byte
	for {
		pub = newP256(t).PublicKey().Bytes()
		if s := base64.RawURLEncoding.EncodeToString(pub); strings.ContainsAny(s, "-_") {
			break
		}
	}
	good := sealing.FormatP256PublicKey(mustKey(t, pub))
	std := "p256:" + strings.TrimRight(base64.StdEncoding.EncodeToString(pub), "=")
	off := bytes.Clone(pub)
	off[64] ^= 0x01
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, good[len(good)-1])
	trailing := good[:len(good)-1] + string(alphabet[last^1])
	compressed := "p256:" + base64.RawURLEncoding.EncodeToString(append([]byte{2 + pub[64]&1}, pub[1:33]...))
	for _, s := range []string{std, trailing, compressed, "p256:" + base64.RawURLEncoding.EncodeToString(off)} {
		if _, err := sealing.ParseP256PublicKey(s); err == nil {
			t.Fatalf("Go reads %q, which the page is meant to refuse", s)
		}
	}
	var got map[string]any
	call(t, ctx, "strict", map[string]string{
		"pubkey": good, "pubkey_std": std, "pubkey_trailing_bits": trailing, "pubkey_compressed": compressed,
		"pubkey_off_curve": "p256:" + base64.RawURLEncoding.EncodeToString(off),
		"base64":           base64.StdEncoding.EncodeToString(randomBytes(t, 31)),
	}, &got)
	if u, _ := got["content_unicode"].(string); u != "é🤖\uFFFD" {
		t.Errorf("content with escapes: the page read %q, want %q (as Go reads it)", u, "é🤖\uFFFD")
	}
	delete(got, "content_unicode")
	if len(got) < 18 {
		t.Fatalf("the harness ran %d cases: %v", len(got), got)
	}
	for c, ok := range got {
		if ok != true {
			t.Errorf("%s: the page did not refuse it (or did not read the good one)", c)
		}
	}
}

func mustKey(t testing.TB, point []byte) *ecdh.PublicKey {
	t.Helper()
	k, err := ecdh.P256().NewPublicKey(point)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestBrowserKeepsDeviceKey: the device key the page keeps in IndexedDB is
// the same after a reload and in another tab, still non-extractable, and
// still opens what Go sealed to it before the reload; tabs asking at once
// get one key; forgotten, the next one is new.
func TestBrowserKeepsDeviceKey(t *testing.T) {
	t.Parallel()
	db := "countersign-test-" + hex.EncodeToString(randomBytes(t, 6))
	ctx := tab(t)
	var first newDevice
	call(t, ctx, "keep", db, &first)
	if first.Extractable || first.Type != "private" || !reflect.DeepEqual(first.Usages, []string{"deriveBits"}) {
		t.Fatalf("the kept device key: extractable %v, type %q, usages %v; want a non-extractable private key for deriveBits only",
			first.Extractable, first.Type, first.Usages)
	}
	lt := sealLive(t, first.Pubkey)

	load(t, ctx) // a reload
	for _, c := range []struct {
		what string
		ctx  context.Context
	}{{"after a reload", ctx}, {"in another tab", siblingTab(t, ctx)}} {
		var again newDevice
		call(t, c.ctx, "keep", db, &again)
		if again.Pubkey != first.Pubkey || again.Extractable {
			t.Fatalf("%s the kept key is %s (extractable %v), before it %s", c.what, again.Pubkey, again.Extractable, first.Pubkey)
		}
		var got struct {
			TaskHash string `json:"task_hash"`
		}
		call(t, c.ctx, "open", lt, &got)
		if want := countersign.TaskHash(lt.envelope); got.TaskHash != want {
			t.Errorf("%s the page's task hash is %s, Go's %s", c.what, got.TaskHash, want)
		}
	}

	var atOnce []string
	call(t, ctx, "keepAtOnce", db+"-b", &atOnce)
	for _, k := range atOnce {
		if k != atOnce[0] {
			t.Fatalf("tabs asking at once got several keys: %v", atOnce)
		}
	}

	var forgotten bool
	call(t, ctx, "forget", db, &forgotten)
	var next newDevice
	call(t, ctx, "keep", db, &next)
	if !forgotten || next.Pubkey == first.Pubkey {
		t.Errorf("forgotten %v; the next key is %s, the first %s; want a new one", forgotten, next.Pubkey, first.Pubkey)
	}
}

// TestBrowserOpensHistoryEntries: an entry of the owner's history that Go
// seals under its entry key, wrapped to the page's device key, opens in the
// page to what the Go device opens (title, summary, result and link), and
// the page refuses what the Go device refuses: a copy of another entry's
// key, a damaged body, a body of another shape, words a task may not show,
// a link that is not https; an entry without a copy is locked.
func TestBrowserOpensHistoryEntries(t *testing.T) {
	t.Parallel()
	ctx := tab(t)
	var dev newDevice
	call(t, ctx, "newDevice", nil, &dev)
	pagePub, err := sealing.ParseP256PublicKey(dev.Pubkey)
	if err != nil {
		t.Fatal(err)
	}
	goKey, err := device.NewKey()
	if err != nil {
		t.Fatal(err)
	}
	goDevice := &device.Device{Key: goKey}
	keys := sealing.GenerateKeyring()
	const project, owner = "0b7c9a52-3c1e-4d7a-9f00-5e2d1c4b6a80", "alice.near"
	type entry struct {
		ID         string  `json:"id"`
		Sealed     string  `json:"sealed"`
		DeviceCopy *string `json:"device_copy"`
	}
	cases := []struct {
		name, body string
		// change the entry as the page is given it (its copy is the page's).
		change func(e *entry, goEntry *client.ActivityEntry)
		want   string
	}{
		{name: "whole", body: `{"title":"Pay Acme Corp","summary":"pay $750.25 to Acme Corp from Checking ••1234 by ACH; it cannot be undone","result":{"text":"Payment sent: transaction t-1 (sent) — 🤖 <b>","url":"https://app.mercury.com/transactions/t-1"}}`,
			want: `{"title":"Pay Acme Corp","summary":"pay $750.25 to Acme Corp from Checking ••1234 by ACH; it cannot be undone","result":"Payment sent: transaction t-1 (sent) — 🤖 <b>","url":"https://app.mercury.com/transactions/t-1"}`},
		{name: "told nothing", body: `{"title":"","summary":"","result":{"text":""}}`, want: `{"title":"","summary":"","result":"","url":""}`},
		{name: "a failure's sentence", body: `{"title":"Write a file","summary":"","result":{"text":"README.md changed on main after it was shown for approval. Nothing was written."}}`,
			want: `{"title":"Write a file","summary":"","result":"README.md changed on main after it was shown for approval. Nothing was written.","url":""}`},
		{name: "no copy", body: `{"title":"t","summary":"","result":{"text":""}}`, want: "refused locked",
			change: func(e *entry, g *client.ActivityEntry) { e.DeviceCopy, g.DeviceCopy = nil, nil }},
		{name: "another entry's copy", body: `{"title":"t","summary":"","result":{"text":""}}`, want: "refused unreadable",
			change: func(e *entry, g *client.ActivityEntry) { e.ID += "0"; g.ID += "0" }},
		{name: "a damaged body", body: `{"title":"t","summary":"","result":{"text":""}}`, want: "refused unreadable",
			change: func(e *entry, g *client.ActivityEntry) {
				b := unb64(t, e.Sealed)
				b[len(b)-1] ^= 1
				e.Sealed, g.Sealed = b64(b), b
			}},
		{name: "another member", body: `{"title":"t","summary":"","result":{"text":""},"more":1}`, want: "refused unreadable"},
		{name: "a result's other member", body: `{"title":"t","summary":"","result":{"text":"","html":"<b>"}}`, want: "refused unreadable"},
		{name: "a number", body: `{"title":1,"summary":"","result":{"text":""}}`, want: "refused unreadable"},
		{name: "a result of two lines", body: `{"title":"t","summary":"","result":{"text":"one\ntwo"}}`, want: "refused unreadable"},
		{name: "a bidi control in the title", body: `{"title":"Pay \u202eevil","summary":"","result":{"text":""}}`, want: "refused unreadable"},
		{name: "a title too long", body: `{"title":"` + strings.Repeat("t", 81) + `","summary":"","result":{"text":""}}`, want: "refused unreadable"},
		{name: "a summary too long", body: `{"title":"t","summary":"` + strings.Repeat("s", 201) + `","result":{"text":""}}`, want: "refused unreadable"},
		{name: "a plain http link", body: `{"title":"t","summary":"","result":{"text":"x","url":"http://example.com/"}}`, want: "refused unreadable"},
		{name: "a link with credentials", body: `{"title":"t","summary":"","result":{"text":"x","url":"https://u:p@example.com/"}}`, want: "refused unreadable"},
		{name: "not JSON", body: `title`, want: "refused unreadable"},
	}
	var list []entry
	goAccepts := make([]bool, len(cases))
	for i, c := range cases {
		id := fmt.Sprintf("r%s-%d", hex.EncodeToString(randomBytes(t, 5)), i+1)
		ek, err := keys.EntryKey(keys.Current(), project, owner, id)
		if err != nil {
			t.Fatal(err)
		}
		sealed, err := ek.Seal([]byte(c.body))
		if err != nil {
			t.Fatal(err)
		}
		pageCopy, err := sealing.WrapEntryKey(pagePub, ek)
		if err != nil {
			t.Fatal(err)
		}
		goCopy, err := sealing.WrapEntryKey(goKey.PublicKey(), ek)
		if err != nil {
			t.Fatal(err)
		}
		pc := b64(pageCopy)
		e := entry{ID: id, Sealed: b64(sealed), DeviceCopy: &pc}
		g := client.ActivityEntry{ID: id, State: "done", Sealed: sealed, DeviceCopy: goCopy}
		if c.change != nil {
			c.change(&e, &g)
		}
		list = append(list, e)
		_, err = goDevice.OpenEntry(g)
		goAccepts[i] = err == nil
	}
	var got []string
	call(t, ctx, "openEntries", list, &got)
	if len(got) != len(cases) {
		t.Fatalf("the page answered %d of %d entries", len(got), len(cases))
	}
	for i, c := range cases {
		if got[i] != c.want {
			t.Errorf("%s: the page says %s, want %s", c.name, got[i], c.want)
		}
		if pageAccepts := !strings.HasPrefix(got[i], "refused"); pageAccepts != goAccepts[i] {
			t.Errorf("%s: the page opens it %v, the Go device %v", c.name, pageAccepts, goAccepts[i])
		}
	}
}
