package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// RunKeys is the service's run-key document, GET
// /.well-known/countersign-run-key: the public keys that sign run receipts.
// The client checks its shape only; a caller that pins the keys parses them
// (origin.ParseKey) and checks that PublicKey is Keys[KeyID].
type RunKeys struct {
	// Algorithm is "ed25519".
	Algorithm string `json:"algorithm"`
	// KeyID is the id of the key that signs receipts now.
	KeyID uint32 `json:"key_id"`
	// PublicKey is that key, "ed25519:<base58>".
	PublicKey string `json:"public_key"`
	// Keys are every key receipts still kept may be signed with, by key id
	// (a decimal number), the current one among them.
	Keys map[string]string `json:"keys"`
}

// Bounds of the run-key document.
const (
	// MaxRunKeyBytes bounds the document's size.
	MaxRunKeyBytes = 64 << 10
	// MaxRunKeys bounds how many keys it lists.
	MaxRunKeys = 1000
)

// RunKeys fetches the service's run keys; it needs no session. A failure to
// reach the service is the transport's error (a *url.Error), an answer
// other than 200 an *Error; a document that is too large, not the expected
// JSON, of another algorithm, without a current key id or with more than
// MaxRunKeys keys is refused with an error saying so ("the service's run
// keys: …").
func (c *Client) RunKeys(ctx context.Context) (RunKeys, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(c.BaseURL, "/")+"/.well-known/countersign-run-key", nil)
	if err != nil {
		return RunKeys{}, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return RunKeys{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxRunKeyBytes+1))
	if err != nil {
		return RunKeys{}, fmt.Errorf("cannot read the service's run keys: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return RunKeys{}, decodeError(resp, body)
	}
	keys, err := decodeRunKeys(body)
	if err != nil {
		return RunKeys{}, fmt.Errorf("the service's run keys: %w", err)
	}
	return keys, nil
}

// decodeRunKeys reads a run-key document and checks its shape.
func decodeRunKeys(b []byte) (RunKeys, error) {
	if len(b) > MaxRunKeyBytes {
		return RunKeys{}, errors.New("the document is too large")
	}
	var doc struct {
		RunKeys
		// KeyID shadows RunKeys.KeyID, so that a missing id is told from 0.
		KeyID *uint32 `json:"key_id"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return RunKeys{}, errors.New("not the expected JSON")
	}
	switch {
	case doc.Algorithm != "ed25519":
		return RunKeys{}, errors.New("the algorithm is not ed25519")
	case doc.KeyID == nil:
		return RunKeys{}, errors.New("no current key id")
	case len(doc.Keys) > MaxRunKeys:
		return RunKeys{}, errors.New("too many keys")
	}
	doc.RunKeys.KeyID = *doc.KeyID
	return doc.RunKeys, nil
}
