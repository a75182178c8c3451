package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"countersign/client"
	"countersign/origin"
)

func runKeyDoc(current uint32, keys map[string]string, publicKey string) []byte {
	return mustJSON(map[string]any{"algorithm": "ed25519", "key_id": current, "public_key": publicKey, "keys": keys})
}

// runKeyServer serves a run-key document that the test may change, and
// the client login fetches the run keys with.
type runKeyServer struct {
	mu     sync.Mutex
	status int
	body   []byte
	c      *client.Client
}

func newRunKeyServer(t testing.TB) *runKeyServer {
	t.Helper()
	s := &runKeyServer{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/.well-known/countersign-run-key" {
			http.NotFound(w, r)
			return
		}
		s.mu.Lock()
		status, body := s.status, s.body
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	s.c = &client.Client{BaseURL: srv.URL}
	return s
}

// fetch serves raw with status and fetches it as login does.
func (s *runKeyServer) fetch(status int, raw []byte) (map[string]string, error) {
	s.mu.Lock()
	s.status, s.body = status, raw
	s.mu.Unlock()
	return fetchRunKeys(context.Background(), s.c)
}

func TestParseRunKeys(t *testing.T) {
	t.Parallel()
	srv := newRunKeyServer(t)
	pub1, _ := runKey(t)
	pub2, _ := runKey(t)
	k1, k2 := origin.FormatKey(pub1), origin.FormatKey(pub2)
	keys, err := srv.fetch(http.StatusOK, runKeyDoc(2, map[string]string{"1": k1, "2": k2}, k2))
	if err != nil || !reflect.DeepEqual(keys, map[string]string{"1": k1, "2": k2}) {
		t.Fatalf("two keys: %v %v", keys, err)
	}
	cases := []struct {
		name string
		raw  []byte
		want string
	}{
		{"not JSON", []byte("<html>"), "not the expected JSON"},
		{"another algorithm", mustJSON(map[string]any{"algorithm": "rsa", "key_id": 1, "public_key": k1, "keys": map[string]string{"1": k1}}), "not ed25519"},
		{"no current key id", mustJSON(map[string]any{"algorithm": "ed25519", "public_key": k1, "keys": map[string]string{"1": k1}}), "no current key id"},
		{"a negative key id", []byte(`{"algorithm":"ed25519","key_id":-1,"keys":{}}`), "not the expected JSON"},
		{"no keys", runKeyDoc(1, nil, k1), "none are pinned"},
		{"the current key missing", runKeyDoc(2, map[string]string{"1": k1}, k1), "not among the keys"},
		{"the current key differing", runKeyDoc(1, map[string]string{"1": k1}, k2), "not the key of its id"},
		{"a garbled key", runKeyDoc(1, map[string]string{"1": "ed25519:0OIl"}, "ed25519:0OIl"), "key 1 is not ed25519"},
		{"a key id that is not a number", runKeyDoc(1, map[string]string{"1": k1, "one": k2}, k1), "not a number"},
		{"too large", append([]byte(`{"x":"`), make([]byte, client.MaxRunKeyBytes)...), "too large"},
	}
	for _, tc := range cases {
		if _, err := srv.fetch(http.StatusOK, tc.raw); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A service that publishes no run keys is named, with its answer.
	if _, err := srv.fetch(http.StatusNotFound, []byte(`{"error":"not found"}`)); err == nil ||
		!strings.Contains(err.Error(), "publishes no run keys (HTTP 404): is it a Countersign service?") {
		t.Errorf("HTTP 404: %v", err)
	}
}

func FuzzParseRunKeys(f *testing.F) {
	srv := newRunKeyServer(f)
	pub, _ := runKey(f)
	k := origin.FormatKey(pub)
	f.Add(runKeyDoc(1, map[string]string{"1": k}, k))
	f.Add([]byte(`{"algorithm":"ed25519","key_id":4294967295,"keys":{"4294967295":""}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		keys, err := srv.fetch(http.StatusOK, raw)
		if err != nil {
			return
		}
		if _, err := pinnedKeys(keys); err != nil {
			t.Fatalf("%q: accepted keys that cannot be pinned: %v", raw, err)
		}
	})
}
