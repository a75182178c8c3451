package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"countersign/connectors/wasm/wasmtest"
)

// copyConnector copies an example's manifest and module into dir/name.
func copyConnector(t *testing.T, dir, name, example string, edit func(manifest string) string) {
	t.Helper()
	to := filepath.Join(dir, name)
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"manifest.json", example + ".wasm"} {
		b, err := os.ReadFile(filepath.Join(wasmtest.Example(example), f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "manifest.json" && edit != nil {
			b = []byte(edit(string(b)))
		}
		if err := os.WriteFile(filepath.Join(to, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestConnectorCheck: connector check passes the examples, listing what
// it checked, and fails a connector that does not hold, exiting 1.
func TestConnectorCheck(t *testing.T) {
	t.Parallel()
	env := map[string]string{"COUNTERSIGN_CONNECTORS_CACHE": wasmtest.CacheDir()}
	r := run(t, context.Background(), env, "connector", "check", wasmtest.Example("todo"))
	if r.code != 0 || !strings.Contains(r.stdout, "ok   module: todo.wasm") ||
		!strings.Contains(r.stdout, `ok   example todo_add #1: awaiting_owner: a confirm task "Add a to-do"`) || !strings.Contains(r.stdout, " passes: ") {
		t.Fatalf("check of the to-do example: %+v", r)
	}
	dir := t.TempDir()
	copyConnector(t, dir, "todo", "todo", func(m string) string { return strings.Replace(m, `"abi": 1`, `"abi": 2`, 1) })
	r = run(t, context.Background(), env, "connector", "check", filepath.Join(dir, "todo"))
	if r.code != 1 || !strings.Contains(r.stdout, "FAIL load: ") || !strings.Contains(r.stdout, "speaks abi 1") || !strings.Contains(r.stderr, "does not pass: 1 of 1 checks failed") {
		t.Fatalf("check of a broken connector: %+v", r)
	}
	if r := run(t, context.Background(), nil, "connector", "check"); r.code != 1 || !strings.Contains(r.stderr, "usage: countersign connector check DIR") {
		t.Fatalf("no directory: %+v", r)
	}
}

// TestServeLoadsConnectorsDir: serve loads every connector under
// CONNECTORS_DIR into its catalogue, naming each build; it refuses to
// start on one that does not hold, or that takes the name of a connector
// it runs already.
func TestServeLoadsConnectorsDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	copyConnector(t, dir, "probe", "probe", nil)
	copyConnector(t, dir, "todo", "todo", nil)
	env := map[string]string{"COUNTERSIGN_DATA_DIR": filepath.Join(t.TempDir(), "data"), "COUNTERSIGN_CONNECTORS_DIR": dir,
		"COUNTERSIGN_CONNECTORS_CACHE": wasmtest.CacheDir()}
	srv := startServe(t, env, "--dev")
	var cat struct {
		Connectors []struct {
			Name  string `json:"name"`
			Build string `json:"build"`
		} `json:"connectors"`
	}
	if code := getJSON(t, srv.base+"/connectors", &cat); code != 200 {
		t.Fatalf("/connectors answered %d", code)
	}
	builds := map[string]string{}
	for _, c := range cat.Connectors {
		builds[c.Name] = c.Build
	}
	if !strings.HasPrefix(builds["todo"], "todo@1.0.0+") || !strings.HasPrefix(builds["probe-wasm"], "probe-wasm@1.0.0+") || builds["probe"] != "probe@1.0.0" {
		t.Fatalf("the catalogue: %v", builds)
	}
	r := srv.stop()
	if !strings.Contains(r.stderr, "connector "+builds["todo"]+" loaded from ") || !strings.Contains(r.stderr, "2 WebAssembly connectors loaded in ") {
		t.Fatalf("serve's log:\n%s", r.stderr)
	}

	// doctor names them, reading their manifests.
	if r := run(t, context.Background(), env, "doctor"); !strings.Contains(r.stdout, "ok   WebAssembly connectors in "+dir+": "+builds["probe-wasm"]+", "+builds["todo"]+"\n") {
		t.Fatalf("doctor: %+v", r)
	}

	// The operator's project put knows them too, reading a policy with the
	// module's declaration.
	pol := filepath.Join(t.TempDir(), "policy.json")
	for _, tc := range []struct {
		policy, says string
		readable     bool
	}{
		{`{"confirm": ["todo_add"], "max_writes_per_day": 5}`, "project alice.near/todo (todo, uuid ", true},
		{`{"confirm": ["todo_remove"]}`, "policy unreadable: `confirm` names `todo_remove`, which is not one of this connector's writes", false},
	} {
		if err := os.WriteFile(pol, []byte(tc.policy), 0o644); err != nil {
			t.Fatal(err)
		}
		r := run(t, context.Background(), env, "project", "put", "--owner", "alice.near", "--name", "todo", "--connector", "todo",
			"--policy", pol, "--agent", "demo-agent.near")
		if r.code != 0 || !strings.Contains(r.stdout, tc.says) || (tc.readable && strings.Contains(r.stdout, "unreadable")) {
			t.Fatalf("project put with %s: %+v", tc.policy, r)
		}
	}

	for _, tc := range []struct {
		name, want string
		edit       func(string) string
	}{
		{"a schema that does not compile", "todo_add", func(m string) string {
			return strings.Replace(m, `"minLength": 1`, `"minLength": "one"`, 1)
		}},
		{"the name of a connector it runs", "connector github is named as a connector this service already runs", func(m string) string {
			return strings.Replace(m, `"name": "todo"`, `"name": "github"`, 1)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			bad := t.TempDir()
			copyConnector(t, bad, "todo", "todo", tc.edit)
			env := map[string]string{"COUNTERSIGN_DATA_DIR": filepath.Join(t.TempDir(), "data"), "COUNTERSIGN_CONNECTORS_DIR": bad,
				"COUNTERSIGN_CONNECTORS_CACHE": wasmtest.CacheDir()}
			r := run(t, context.Background(), env, "serve", "--dev", "--listen", "127.0.0.1:0")
			if r.code != 1 || !strings.Contains(r.stderr, tc.want) || strings.Contains(r.stderr, "listening on") {
				t.Fatalf("serve: %+v", r)
			}
			if r := run(t, context.Background(), env, "doctor"); r.code != 1 || !strings.Contains(r.stdout, "FAIL WebAssembly connectors in "+bad) ||
				!strings.Contains(r.stdout, tc.want) {
				t.Fatalf("doctor: %+v", r)
			}
		})
	}
}
