package wasm_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"countersign"
	"countersign/connectors/connectortest"
	"countersign/connectors/wasm"
	"countersign/connectors/wasm/abi"
	"countersign/connectors/wasm/wasmtest"
)

// A module with no exports at all, and one importing from a module the
// host does not offer: both valid WebAssembly.
var (
	emptyModule   = []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	foreignImport = append(append([]byte(nil), emptyModule...),
		0x01, 0x04, 0x01, 0x60, 0x00, 0x00, // type section: () -> ()
		0x02, 0x0b, 0x01, 0x03, 'e', 'n', 'v', 0x03, 'f', 'o', 'o', 0x00, 0x00) // import env.foo
)

// TestLoadRefusals: a connector whose manifest, schemas, examples or
// module do not hold is refused at load, naming its directory and why, as
// serve refuses to start on it.
func TestLoadRefusals(t *testing.T) {
	t.Parallel()
	h := wasmtest.Host(t, wasm.Options{})
	todo := wasmtest.Example("todo")
	for _, tc := range []struct {
		name   string
		edit   func(*abi.Manifest)
		module func([]byte) []byte
		want   string
	}{
		{"a schema that does not compile", func(m *abi.Manifest) {
			m.Operations[1].Schema = []byte(`{"type": "object", "properties": {"title": {"type": 5}}}`)
		}, nil, "todo_add"},
		{"an example its schema refuses", func(m *abi.Manifest) {
			m.Operations[1].Examples = []json.RawMessage{json.RawMessage(`{"title": 5}`)}
		}, nil, "example"},
		{"a result schema that is not an object", func(m *abi.Manifest) { m.Operations[0].Result = []byte(`true`) }, nil, "result schema"},
		{"a priced answer", func(m *abi.Manifest) { m.Operations[3].Price = 5 }, nil, "priced 0"},
		{"a bad name", func(m *abi.Manifest) { m.Name = "To Do" }, nil, "not well formed"},
		{"an operation the module does not serve", func(m *abi.Manifest) { m.Operations[0].Name = "todos_all" }, nil,
			"it serves confirm (answer), todo_add (write), todo_done (write), todos_list (read), but its manifest declares confirm (answer), todo_add (write), todo_done (write), todos_all (read)"},
		{"an operation of another kind", func(m *abi.Manifest) { m.Operations[0].Kind = "write"; m.Operations[0].Price = 1 }, nil, "but its manifest declares"},
		{"no module file", func(m *abi.Manifest) { m.Module = "missing.wasm" }, func([]byte) []byte { return nil }, "missing.wasm"},
		{"a module that is not WebAssembly", nil, func([]byte) []byte { return []byte("#!/bin/sh\necho hi\n") }, "does not compile"},
		{"a module without the ABI's exports", nil, func([]byte) []byte { return emptyModule }, "does not export countersign_abi"},
		{"a module importing from elsewhere", nil, func([]byte) []byte { return foreignImport }, `imports from "env"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := connectorDir(t, todo, tc.edit, tc.module)
			_, err := h.LoadDir(ctx, dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), dir) {
				t.Fatalf("got %v, want an error naming %s and saying %q", err, dir, tc.want)
			}
		})
	}
}

// TestLoadDirectory: every connector under the directory loads; a file
// that is not a connector's directory, or two connectors of one name,
// refuse the whole directory.
func TestLoadDirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, ex := range []string{"probe", "todo"} {
		src := wasmtest.Example(ex)
		m := readManifest(t, src)
		bin, err := os.ReadFile(filepath.Join(src, m.Module))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, ex), 0o755); err != nil {
			t.Fatal(err)
		}
		writeConnector(t, filepath.Join(dir, ex), m, bin)
	}
	if err := os.Mkdir(filepath.Join(dir, ".cache"), 0o755); err != nil {
		t.Fatal(err)
	}
	mods, err := wasmtest.Host(t, wasm.Options{}).Load(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(mods) != 2 || mods[0].Manifest.Name != "probe-wasm" || mods[1].Manifest.Name != "todo" {
		t.Fatalf("loaded %v", mods)
	}

	// Another connector named todo.
	if err := os.CopyFS(filepath.Join(dir, "todo2"), os.DirFS(filepath.Join(dir, "todo"))); err != nil {
		t.Fatal(err)
	}
	if _, err := wasmtest.Host(t, wasm.Options{}).Load(ctx, dir); err == nil || !strings.Contains(err.Error(), "both named todo") {
		t.Fatalf("two named todo: %v", err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "todo2")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("hi"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := wasmtest.Host(t, wasm.Options{}).Load(ctx, dir); err == nil || !strings.Contains(err.Error(), "README is not a directory") {
		t.Fatalf("a stray file: %v", err)
	}
}

// TestBuildNamesTheModule: a module's build is name@version+<12 hex of its
// SHA-256>; tasks name it; a module changed by one section is another
// build (the platform voids a task whose build changed before its answer
// runs).
func TestBuildNamesTheModule(t *testing.T) {
	t.Parallel()
	src := wasmtest.Example("probe")
	bin, err := os.ReadFile(filepath.Join(src, "probe.wasm"))
	if err != nil {
		t.Fatal(err)
	}
	m := wasmtest.Load(t, src, wasm.Options{})
	if m.Build != wasm.BuildOf("probe-wasm", "1.0.0", bin) || !regexp.MustCompile(`^probe-wasm@1\.0\.0\+[0-9a-f]{12}$`).MatchString(m.Build) ||
		m.Connector.Build() != m.Build || !strings.HasPrefix(m.SHA256, m.Build[len(m.Build)-12:]) {
		t.Fatalf("build %s, sha256 %s", m.Build, m.SHA256)
	}
	h := connectortest.New(t, m.Connector)
	out, err := h.Call(ctx, `{"operation": "guess_start"}`)
	if err != nil {
		t.Fatal(err)
	}
	task, err := h.Awaiting(out)
	if err != nil {
		t.Fatal(err)
	}
	env, err := countersign.ParseEnvelope(task.Envelope)
	if err != nil || env.Build != m.Build {
		t.Fatalf("the task's build %q, want %q (%v)", env.Build, m.Build, err)
	}

	changed := wasmtest.Load(t, connectorDir(t, src, nil, withCustomSection), wasm.Options{})
	if changed.Build == m.Build || changed.SHA256 == m.SHA256 || !strings.HasPrefix(changed.Build, "probe-wasm@1.0.0+") {
		t.Fatalf("a changed module keeps build %s", changed.Build)
	}
	out, err = connectortest.New(t, changed.Connector).Call(ctx, `{"operation": "guess_start"}`)
	if err != nil {
		t.Fatal(err)
	}
	var a struct {
		TaskID string `json:"task_id"`
	}
	_ = json.Unmarshal(out, &a)
	if a.TaskID == "" {
		t.Fatalf("answered %s", out)
	}
}
