package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"countersign/approval"
	"countersign/client"
)

// externalSigner is a device.Signer for a wallet that is not on this
// machine: it prints the exact sentence and recipient to sign, then reads
// the wallet's answer, the JSON near-api-js signMessage returns, from its
// input, and checks it before handing it on.
type externalSigner struct {
	account string
	prompt  io.Writer
	answers *json.Decoder
}

func newExternalSigner(account string, in io.Reader, prompt io.Writer) *externalSigner {
	return &externalSigner{account: account, prompt: prompt,
		answers: json.NewDecoder(io.LimitReader(in, approval.MaxWalletJSONBytes))}
}

// Sign implements device.Signer.
func (s *externalSigner) Sign(message, recipient string) (client.Signed, error) {
	fmt.Fprintf(s.prompt, "Sign this message with a full-access key of %s (NEP-413 signMessage):\n"+
		"  message:   %s\n  recipient: %s\n"+
		"then paste the wallet's JSON answer {accountId, publicKey, signature, nonce, …} here:\n",
		s.account, message, recipient)
	var raw json.RawMessage
	if err := s.answers.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			return client.Signed{}, errors.New("no answer from the wallet on standard input")
		}
		return client.Signed{}, errors.New("the wallet's answer is not JSON")
	}
	return parseWalletAnswer(raw, s.account, message, recipient)
}

// walletAnswer is the JSON a wallet's signMessage returns, with the request's
// members a wallet may echo.
type walletAnswer struct {
	AccountID   *string         `json:"accountId"`
	PublicKey   string          `json:"publicKey"`
	Signature   string          `json:"signature"`
	Nonce       json.RawMessage `json:"nonce"`
	Message     *string         `json:"message"`
	Recipient   *string         `json:"recipient"`
	CallbackURL *string         `json:"callbackUrl"`
	State       json.RawMessage `json:"state"`
}

// parseWalletAnswer checks a wallet's answer to the request to sign message
// for recipient as account: its form, that what it echoes is what was
// asked, and that its signature verifies over the sentence asked for. It
// returns the pieces the service's bodies carry. Its errors never quote the
// answer.
func parseWalletAnswer(raw []byte, account, message, recipient string) (client.Signed, error) {
	if len(raw) > approval.MaxWalletJSONBytes {
		return client.Signed{}, errors.New("the wallet's answer is too large")
	}
	var w walletAnswer
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&w); err != nil {
		return client.Signed{}, errors.New("the wallet's answer is not {accountId, publicKey, signature, nonce, message?, recipient?, callbackUrl?}")
	}
	if _, err := dec.Token(); err != io.EOF {
		return client.Signed{}, errors.New("the wallet's answer has more than one JSON value")
	}
	switch {
	case w.AccountID != nil && *w.AccountID != account:
		return client.Signed{}, fmt.Errorf("the wallet signed as another account, not %s", account)
	case w.Message != nil && *w.Message != message:
		return client.Signed{}, errors.New("the wallet signed another message than the one asked for")
	case w.Recipient != nil && *w.Recipient != recipient:
		return client.Signed{}, fmt.Errorf("the wallet signed for another recipient than %s", recipient)
	}
	key, err := approval.ParsePublicKey(w.PublicKey)
	if err != nil {
		return client.Signed{}, fmt.Errorf("the wallet's publicKey: %s", oneLine(err))
	}
	sig, err := approval.ParseSignature(w.Signature, key.Type())
	if err != nil {
		return client.Signed{}, fmt.Errorf("the wallet's signature: %s", oneLine(err))
	}
	nonce, err := parseWalletNonce(w.Nonce)
	if err != nil {
		return client.Signed{}, err
	}
	p := approval.Payload{Message: message, Nonce: nonce, Recipient: recipient, CallbackURL: w.CallbackURL}
	if err := p.VerifySignature(key, sig); err != nil {
		return client.Signed{}, errors.New("the wallet's signature does not verify over the message asked for (with its nonce, recipient and callback URL)")
	}
	return client.Signed{PublicKey: key.String(), Signature: base64.StdEncoding.EncodeToString(sig),
		Nonce: nonce.String(), CallbackURL: w.CallbackURL}, nil
}

// parseWalletNonce reads a nonce as base64 of 32 bytes, or as the array of
// 32 byte values JavaScript writes for a Uint8Array.
func parseWalletNonce(raw json.RawMessage) (approval.Nonce, error) {
	var n approval.Nonce
	var text string
	if json.Unmarshal(raw, &text) == nil {
		parsed, err := approval.ParseNonce(text)
		if err != nil {
			return n, errors.New("the wallet's nonce is not base64 of 32 bytes")
		}
		return parsed, nil
	}
	var vals []int
	if json.Unmarshal(raw, &vals) != nil || len(vals) != len(n) {
		return n, errors.New("the wallet's answer has no nonce of 32 bytes")
	}
	for i, v := range vals {
		if v < 0 || v > 255 {
			return n, errors.New("the wallet's nonce is not 32 byte values")
		}
		n[i] = byte(v)
	}
	return n, nil
}
