package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"countersign/client"
	"countersign/origin"
)

// runKeysTimeout bounds the fetch of the run keys at login.
const runKeysTimeout = 30 * time.Second

// fetchRunKeys fetches the service's run keys for pinning (the client
// bounds the document to client.MaxRunKeyBytes and checks its shape) and
// checks every key.
func fetchRunKeys(ctx context.Context, c *client.Client) (map[string]string, error) {
	rc := *c
	if rc.HTTP == nil {
		rc.HTTP = &http.Client{Timeout: runKeysTimeout}
	}
	doc, err := rc.RunKeys(ctx)
	var ce *client.Error
	var ue *url.Error
	switch {
	case errors.As(err, &ce):
		return nil, fmt.Errorf("the service at %s publishes no run keys (HTTP %d): is it a Countersign service?", c.BaseURL, ce.Status)
	case errors.As(err, &ue):
		return nil, cannotReach(c.BaseURL, err)
	case err != nil:
		return nil, err
	}
	keys, err := pinRunKeys(doc)
	if err != nil {
		return nil, fmt.Errorf("the service's run keys: %v", err)
	}
	return keys, nil
}

// pinRunKeys checks the keys of a run-key document for pinning: every key
// is an ed25519 key under a key id, and the current key is one of them.
func pinRunKeys(doc client.RunKeys) (map[string]string, error) {
	keys, err := pinnedKeys(doc.Keys)
	if err != nil {
		return nil, err
	}
	cur, ok := keys[doc.KeyID]
	if !ok {
		return nil, errors.New("the current key is not among the keys")
	}
	pub, err := origin.ParseKey(doc.PublicKey)
	if err != nil || !ed25519.PublicKey(pub).Equal(cur) {
		return nil, errors.New("the current key is not the key of its id")
	}
	out := make(map[string]string, len(keys))
	for id, k := range keys {
		out[strconv.FormatUint(uint64(id), 10)] = origin.FormatKey(k)
	}
	return out, nil
}

// pinnedKeys turns the pinned run keys into a verifier.
func pinnedKeys(m map[string]string) (origin.Keys, error) {
	if len(m) == 0 {
		return nil, errors.New("none are pinned")
	}
	keys := origin.Keys{}
	for id, k := range m {
		n, err := strconv.ParseUint(id, 10, 32)
		if err != nil || strconv.FormatUint(n, 10) != id {
			return nil, errors.New("a key id is not a number")
		}
		pub, err := origin.ParseKey(k)
		if err != nil {
			return nil, fmt.Errorf("key %s is not ed25519:<base58>", id)
		}
		keys[uint32(n)] = pub
	}
	return keys, nil
}
