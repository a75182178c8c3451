package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"countersign/client"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// TestRunKeysFromTheService fetches the run keys of the whole service,
// over loopback HTTP, and finds the enclave's keys.
func TestRunKeysFromTheService(t *testing.T) {
	t.Parallel()
	w := servicetest.New(t, storetest.SQLite(t))
	got, err := (&client.Client{BaseURL: w.URL + "/"}).RunKeys(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cur, keys, err := w.Enclave.Keys.RunKeys()
	if err != nil {
		t.Fatal(err)
	}
	want := client.RunKeys{Algorithm: "ed25519", KeyID: cur, PublicKey: keys[cur], Keys: map[string]string{}}
	for id, k := range keys {
		want.Keys[fmt.Sprint(id)] = k
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("run keys\n got %+v\nwant %+v", got, want)
	}
}

// runKeyAnswer serves one answer to GET /.well-known/countersign-run-key.
func runKeyAnswer(t *testing.T, status int, body string) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/.well-known/countersign-run-key" || r.Header.Get("Authorization") != "" {
			t.Errorf("asked %s %s (Authorization %q)", r.Method, r.URL, r.Header.Get("Authorization"))
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	return &client.Client{BaseURL: srv.URL, Session: "os_0123456789abcdef"}
}

const goodRunKeys = `{"algorithm":"ed25519","key_id":1,"public_key":"ed25519:3ogUn1GNXoASaRbxPNeVJnVv5rG4EPBtmQmX61jVorUe","keys":{"1":"ed25519:3ogUn1GNXoASaRbxPNeVJnVv5rG4EPBtmQmX61jVorUe"}}`

func TestRunKeysBound(t *testing.T) {
	t.Parallel()
	// A document of exactly MaxRunKeyBytes is read; one byte more is not.
	exact := goodRunKeys + strings.Repeat(" ", client.MaxRunKeyBytes-len(goodRunKeys))
	if _, err := runKeyAnswer(t, 200, exact).RunKeys(context.Background()); err != nil {
		t.Fatalf("a document of %d bytes: %v", len(exact), err)
	}
	_, err := runKeyAnswer(t, 200, exact+" ").RunKeys(context.Background())
	if err == nil || err.Error() != "the service's run keys: the document is too large" {
		t.Fatalf("a document of %d bytes: %v", len(exact)+1, err)
	}
}

func TestRunKeysRefusals(t *testing.T) {
	t.Parallel()
	many := make([]string, client.MaxRunKeys+1)
	for i := range many {
		many[i] = fmt.Sprintf(`"%d":"ed25519:x"`, i)
	}
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"not JSON", 200, `<html>`, "the service's run keys: not the expected JSON"},
		{"two documents", 200, goodRunKeys + goodRunKeys, "the service's run keys: not the expected JSON"},
		{"keys of the wrong shape", 200, `{"algorithm":"ed25519","key_id":1,"keys":["x"]}`, "the service's run keys: not the expected JSON"},
		{"a key id out of range", 200, `{"algorithm":"ed25519","key_id":4294967296,"keys":{}}`, "the service's run keys: not the expected JSON"},
		{"another algorithm", 200, strings.Replace(goodRunKeys, `"ed25519",`, `"rsa",`, 1), "the service's run keys: the algorithm is not ed25519"},
		{"no current key id", 200, strings.Replace(goodRunKeys, `"key_id":1,`, ``, 1), "the service's run keys: no current key id"},
		{"too many keys", 200, `{"algorithm":"ed25519","key_id":1,"keys":{` + strings.Join(many, ",") + `}}`, "the service's run keys: too many keys"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			keys, err := runKeyAnswer(t, tt.status, tt.body).RunKeys(context.Background())
			if err == nil || err.Error() != tt.want {
				t.Fatalf("RunKeys = %+v, %v; want %q", keys, err, tt.want)
			}
			var ce *client.Error
			if errors.As(err, &ce) {
				t.Errorf("a malformed document is a refusal by the service: %v", ce)
			}
		})
	}
}

func TestRunKeysNotPublished(t *testing.T) {
	t.Parallel()
	_, err := runKeyAnswer(t, http.StatusNotFound, `{"error":"not found"}`).RunKeys(context.Background())
	var ce *client.Error
	if !errors.As(err, &ce) || ce.Status != http.StatusNotFound || ce.Message != "not found" {
		t.Fatalf("HTTP 404: %v", err)
	}

	c := runKeyAnswer(t, 200, goodRunKeys)
	c.BaseURL = "http://127.0.0.1:1"
	_, err = c.RunKeys(context.Background())
	var ue *url.Error
	if !errors.As(err, &ue) {
		t.Fatalf("an unreachable service: %v (%T), want a *url.Error", err, err)
	}
}
