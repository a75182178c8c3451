package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// Expected values computed outside Go (Python's hmac and base64) for the key
// 00 01 … 1f and approvedEvent sent at 2026-11-30T12:00:00Z.
const (
	fixedSecret      = "whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="
	fixedBodyHex     = "ff911dbdec52c7138b8d301d5078bd034627a2083054aeebfd853f7953126254"
	fixedStandardSig = "v1,/Xtq//5IiHinTApFJfr2a6SUItZBXpyVF50oN5bGpnY="
)

func TestSignFixedVector(t *testing.T) {
	t.Parallel()
	key, err := DecodeSecret(fixedSecret)
	if err != nil {
		t.Fatal(err)
	}
	sentAt := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	body, h, err := Sign(key, approvedEvent(), sentAt)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Content-Type":        "application/json",
		"User-Agent":          UserAgent,
		"X-Event-Type":        "task_approved",
		"X-Wallet-Id":         "owner:alice.near",
		"X-Webhook-Signature": fixedBodyHex,
		"webhook-id":          "evt_0123",
		"webhook-timestamp":   "1796040000",
		"webhook-signature":   fixedStandardSig,
	}
	for k, v := range want {
		if got := h.Get(k); got != v {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	if len(h) != len(want) {
		t.Errorf("%d headers, want %d: %v", len(h), len(want), h)
	}
	wantBody, _ := approvedEvent().Encode()
	if string(body) != string(wantBody) {
		t.Errorf("Sign's body differs from Encode's")
	}

	// The same headers verify with the Standard Webhooks library, fed the
	// owner's secret string as a receiver would.
	wh, err := standardwebhooks.NewWebhook(fixedSecret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.VerifyIgnoringTimestamp(body, h); err != nil {
		t.Fatalf("standard webhooks verify: %v", err)
	}
	tampered := append([]byte{}, body...)
	tampered[10] ^= 1
	if err := wh.VerifyIgnoringTimestamp(tampered, h); err == nil {
		t.Fatal("standard webhooks verified a tampered body")
	}
}

func TestSignMatchesPlainHMAC(t *testing.T) {
	t.Parallel()
	secret, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	key, err := DecodeSecret(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ev := approvedEvent()
	body, h, err := Sign(key, ev, now)
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, key)
	m.Write(body)
	if got, want := h.Get("X-Webhook-Signature"), hex.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("X-Webhook-Signature = %s, want %s", got, want)
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	m = hmac.New(sha256.New, key)
	m.Write([]byte(ev.ID + "." + ts + "." + string(body)))
	if got, want := h.Get("webhook-signature"), "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)); got != want {
		t.Fatalf("webhook-signature = %s, want %s", got, want)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(body, h); err != nil {
		t.Fatalf("standard webhooks verify: %v", err)
	}
	// Another secret does not verify.
	other, _ := NewSecret()
	wh2, _ := standardwebhooks.NewWebhook(other)
	if err := wh2.Verify(body, h); err == nil {
		t.Fatal("verified under another secret")
	}
}

func TestSignRefuses(t *testing.T) {
	t.Parallel()
	key := make([]byte, 32)
	for _, k := range [][]byte{nil, {}, make([]byte, 31), make([]byte, 33)} {
		if _, _, err := Sign(k, approvedEvent(), time.Now()); err == nil {
			t.Errorf("Sign accepted a %d-byte key", len(k))
		}
	}
	bad := approvedEvent()
	bad.Owner = "x\r\ny"
	if _, _, err := Sign(key, bad, time.Now()); err == nil {
		t.Error("Sign accepted an invalid event")
	}
}
