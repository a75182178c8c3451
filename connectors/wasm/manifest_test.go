package wasm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countersign/connectors/wasm"
	"countersign/connectors/wasm/abi"
	"countersign/connectors/wasm/wasmtest"
)

// TestManifestRefusals: a manifest that does not read, or breaks one of
// the host's rules, is refused with a sentence naming the rule.
func TestManifestRefusals(t *testing.T) {
	t.Parallel()
	good, err := os.ReadFile(filepath.Join(wasmtest.Example("todo"), wasm.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wasm.ParseManifest(good); err != nil {
		t.Fatalf("the example's manifest: %v", err)
	}
	edit := func(f func(m *abi.Manifest)) []byte {
		var m abi.Manifest
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(&m)
		b, _ := json.Marshal(m)
		return b
	}
	creds := func(f func(c *abi.Credentials)) []byte {
		return edit(func(m *abi.Manifest) { f(m.Egress.Credentials) })
	}
	for _, tc := range []struct {
		name     string
		manifest []byte
		want     string
	}{
		{"not JSON", []byte("{"), "does not read"},
		{"unknown member", []byte(strings.Replace(string(good), `"abi": 1,`, `"abi": 1, "extra": true,`, 1)), "unknown field"},
		{"member twice", []byte(strings.Replace(string(good), `"abi": 1,`, `"abi": 1, "ABI": 1,`, 1)), "twice"},
		{"trailing data", append(append([]byte(nil), good...), "{}"...), "data after"},
		{"another abi", edit(func(m *abi.Manifest) { m.ABI = 2 }), "speaks abi 1"},
		{"version with +", edit(func(m *abi.Manifest) { m.Version = "1.0.0+abc" }), "the service adds +<hash>"},
		{"version too long", edit(func(m *abi.Manifest) { m.Version = strings.Repeat("1", 52) }), "version"},
		{"module in another directory", edit(func(m *abi.Manifest) { m.Module = "../todo.wasm" }), "beside the manifest"},
		{"module not .wasm", edit(func(m *abi.Manifest) { m.Module = "todo" }), "ending in .wasm"},
		{"no operation", edit(func(m *abi.Manifest) { m.Operations = nil }), "no operation"},
		{"policy key of no kind", edit(func(m *abi.Manifest) { m.PolicyKeys["max_writes_per_day"] = "number" }), "its kind is not"},
		{"limit too long", edit(func(m *abi.Manifest) { m.Operations[0].LimitMS = 121_000 }), "limit_ms"},
		{"host with a scheme", edit(func(m *abi.Manifest) { m.Egress.Hosts = []string{"https://api.todo.example"} }), "egress host"},
		{"host in capitals", edit(func(m *abi.Manifest) { m.Egress.Hosts = []string{"API.todo.example"} }), "egress host"},
		{"host with a path", edit(func(m *abi.Manifest) { m.Egress.Hosts = []string{"api.todo.example/v1"} }), "egress host"},
		{"host port 0", edit(func(m *abi.Manifest) { m.Egress.Hosts = []string{"api.todo.example:0"} }), "egress host"},
		{"host twice", edit(func(m *abi.Manifest) { m.Egress.Hosts = []string{"a.example", "a.example:443"} }), "listed twice"},
		{"no members", creds(func(c *abi.Credentials) { c.Members = nil }), "no members"},
		{"template names another member", creds(func(c *abi.Credentials) { c.Header["Authorization"] = "Bearer {secret}" }), "not a declared member"},
		{"member attached nowhere", creds(func(c *abi.Credentials) { c.Members = append(c.Members, "other") }), "no template attaches it"},
		{"no template", creds(func(c *abi.Credentials) { c.Header = nil }), "neither a header nor a query"},
		{"Host header", creds(func(c *abi.Credentials) { c.Header = map[string]string{"Host": "{token}"} }), "not one a template may set"},
		{"stray brace", creds(func(c *abi.Credentials) { c.Header["Authorization"] = "Bearer {token}}" }), "brace"},
		{"control character", creds(func(c *abi.Credentials) { c.Header["Authorization"] = "Bearer\n{token}" }), "control character"},
		{"bad query name", creds(func(c *abi.Credentials) { c.Query = map[string]string{"a key": "{token}"} }), "query name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := wasm.ParseManifest(tc.manifest)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
}

// FuzzParseManifest: any bytes are read or refused, never a panic, and a
// manifest that reads writes back to one that reads the same.
func FuzzParseManifest(f *testing.F) {
	for _, ex := range []string{"todo", "probe"} {
		b, err := os.ReadFile(filepath.Join(wasmtest.Example(ex), wasm.ManifestFile))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"abi":1}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := wasm.ParseManifest(b)
		if err != nil {
			return
		}
		again, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := wasm.ParseManifest(again); err != nil {
			t.Fatalf("%s reads, but written again does not: %v", b, err)
		}
	})
}
