package approval_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/mr-tron/base58"
)

func decodeBase58(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base58.Decode(s)
	if err != nil {
		t.Fatalf("base58: %v", err)
	}
	return b
}

func encodeBase58(b []byte) string { return base58.Encode(b) }

func jsonReader(t testing.TB, v any) io.Reader {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

func ptr[T any](v T) *T { return &v }

func jsonDecode(r *http.Request, v any) error {
	return json.NewDecoder(r.Body).Decode(v)
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
