package countersign_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
)

// pkgImports is a package of the module and the packages it imports.
type pkgImports struct {
	path    string
	imports []string
}

// listImports runs go list once for every test that reads the module's
// import graph.
var listImports = sync.OnceValues(func() ([]pkgImports, error) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		return nil, err
	}
	var pkgs []pkgImports
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkgs = append(pkgs, pkgImports{path: f[0], imports: f[1:]})
	}
	return pkgs, nil
})

// moduleImports is every package of the module with its imports.
func moduleImports(t *testing.T) []pkgImports {
	t.Helper()
	pkgs, err := listImports()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	return pkgs
}

// TestArchitectureTableMatchesImports: every package of the module has a row
// in docs/architecture.md, and the row's "project imports" are the
// package's direct imports inside the module, no more and no fewer.
func TestArchitectureTableMatchesImports(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string][]string{} // package → project imports; nil: everything
	cell := regexp.MustCompile("`([^`]+)`")
	for _, line := range strings.Split(string(doc), "\n") {
		cols := strings.Split(line, "|")
		if len(cols) != 6 || !strings.HasPrefix(strings.TrimSpace(cols[1]), "`") {
			continue
		}
		name := strings.TrimSuffix(cell.FindStringSubmatch(cols[1])[1], "/")
		pkg := "countersign"
		if name != "countersign" {
			pkg += "/" + name
		}
		imports := strings.TrimSpace(cols[3])
		if imports == "everything" {
			rows[pkg] = nil
			continue
		}
		list := []string{}
		if strings.Contains(imports, "root") {
			list = append(list, "countersign")
		}
		for _, m := range cell.FindAllStringSubmatch(imports, -1) {
			list = append(list, "countersign/"+m[1])
		}
		slices.Sort(list)
		rows[pkg] = list
	}
	pkgs := moduleImports(t)
	if len(pkgs) < 15 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, p := range pkgs {
		pkg, got := p.path, []string{}
		for _, imp := range p.imports {
			if imp == "countersign" || strings.HasPrefix(imp, "countersign/") {
				got = append(got, imp)
			}
		}
		slices.Sort(got)
		want, ok := rows[pkg]
		switch {
		case !ok:
			t.Errorf("docs/architecture.md has no row for %s", pkg)
		case want != nil && !slices.Equal(got, want):
			t.Errorf("%s imports %v; docs/architecture.md says %v", pkg, got, want)
		}
		delete(rows, pkg)
	}
	for pkg := range rows {
		t.Errorf("docs/architecture.md has a row for %s, which is no package", pkg)
	}
}

// storePorts names, for each package that uses the store, the interface it
// is given the store's transactions as: one of its own (made of package
// store's aggregates) or one of package store's; "" for a package that
// calls no method of a transaction. wholeTx are the packages that see the
// whole of store.Tx: the port itself, its implementation and conformance
// suite, and the test world.
var (
	storePorts = map[string]string{
		"countersign/inbox":            "doorTx",
		"countersign/enclave":          "",
		"countersign/enclave/history":  "",
		"countersign/enclave/side":     "",
		"countersign/enclave/calls":    "callsTx",
		"countersign/enclave/answers":  "answersTx",
		"countersign/enclave/delivery": "deliveryTx",
		"countersign/enclave/sweeps":   "sweepsTx",
		"countersign/enclave/rotation": "rotationTx",
		"countersign/enclave/unlock":   "unlockTx",
		"countersign/httpapi":          "countersign/store.Metrics",
		"countersign/store/jobs":       "",
		"countersign/cmd/countersign":  "operatorTx",
	}
	wholeTx = []string{"countersign/store", "countersign/store/sqlstore", "countersign/store/storetest", "countersign/servicetest"}
)

// TestConsumersKeepToTheirPorts: every package that uses the store is
// given its transactions as the interface storePorts names (docs/
// architecture.md, "Ports"), calls no method of a transaction outside it
// (through store.Tx, a type assertion or a helper's parameter), names
// store.Tx only where store.Narrow converts it, and calls at least one
// method of each aggregate its port is made of.
func TestConsumersKeepToTheirPorts(t *testing.T) {
	t.Parallel()
	var consumers []string
	for _, p := range moduleImports(t) {
		if !slices.Contains(p.imports, "countersign/store") || slices.Contains(wholeTx, p.path) {
			continue
		}
		if _, ok := storePorts[p.path]; !ok {
			t.Errorf("%s uses the store but declares no port: give it an interface of the aggregates it touches, through store.Narrow, and add it to storePorts", p.path)
			continue
		}
		consumers = append(consumers, p.path)
	}
	for pkg := range storePorts {
		if !slices.Contains(consumers, pkg) {
			t.Errorf("storePorts names %s, which does not use the store", pkg)
		}
	}
	w := loadPackages(t, consumers...)
	for _, pkg := range consumers {
		files := w.parse(t, pkg)
		for _, p := range w.portProblems(t, pkg, files, storePorts[pkg]) {
			t.Error(p)
		}
	}
}

// TestPortProblemsAreFound: the check above finds each way out of a port.
func TestPortProblemsAreFound(t *testing.T) {
	t.Parallel()
	w := loadPackages(t, "countersign/store")
	const head = `package p

import (
	"context"
	"time"

	"countersign/store"
)

type portTx interface {
	store.Tasks
	store.Mutes
}

func port(s store.Store) store.Port[portTx] {
	return store.Narrow(s, func(tx store.Tx) portTx { return tx })
}

func use(ctx context.Context, s store.Port[portTx]) error {
	return s.Tx(ctx, func(tx portTx) error {
		_, err := tx.Task(ctx, "t")
		_, err = tx.Mutes(ctx, "o")
		return err
	})
}

var _ = time.Now
`
	for _, c := range []struct {
		name, port, src string
		want            []string // substrings, one problem each
	}{
		{"within the port", "portTx", "", nil},
		{"a transaction seen whole", "portTx", `
func whole(ctx context.Context, s store.Store) error {
	return s.Tx(ctx, func(tx store.Tx) error { return tx.Heartbeat(ctx, "r", time.Now()) })
}`, []string{"calls Heartbeat, which is outside portTx", "names store.Tx outside store.Narrow"}},
		{"an aggregate asserted", "portTx", `
func asserted(ctx context.Context, tx portTx) (map[uint32][]string, error) {
	return tx.(store.Rewrap).KeyIDsInUse(ctx)
}`, []string{"calls KeyIDsInUse, which is outside portTx"}},
		{"a helper taking another aggregate", "portTx", `
func helper(ctx context.Context, tx store.Upkeep) error { return tx.Heartbeat(ctx, "r", time.Now()) }`,
			[]string{"calls Heartbeat, which is outside portTx"}},
		{"no port at all", "", "", []string{"calls Task, which is outside its port (none)", "calls Mutes, which is outside its port (none)"}},
		{"a store aggregate as the port", "countersign/store.Mutes", "", []string{"calls Task, which is outside store.Mutes"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f, err := parser.ParseFile(w.fset, "p.go", head+c.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := w.portProblems(t, "countersign/p", []*ast.File{f}, c.port)
			if len(got) != len(c.want) {
				t.Fatalf("problems %q; want one for each of %q", got, c.want)
			}
			for i, want := range c.want {
				if !strings.Contains(got[i], want) {
					t.Errorf("problem %q; want it to say %q", got[i], want)
				}
			}
		})
	}
	t.Run("an aggregate a port is made of and never calls", func(t *testing.T) {
		t.Parallel()
		src := strings.Replace(head, "\tstore.Mutes\n", "\tstore.Mutes\n\tstore.Rewrap\n", 1)
		f, err := parser.ParseFile(w.fset, "p.go", src, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := w.portProblems(t, "countersign/p", []*ast.File{f}, "portTx")
		if len(got) != 1 || !strings.Contains(got[0], "portTx is made of store.Rewrap") {
			t.Fatalf("problems %q; want one saying portTx is made of store.Rewrap, never called", got)
		}
	})
}

// goPackages are packages as go list describes them, with their compiled
// export data, to type-check a package's source against.
type goPackages struct {
	fset *token.FileSet
	pkgs map[string]goPackage
}

type goPackage struct {
	ImportPath, Dir, Export string
	GoFiles                 []string
}

func loadPackages(t *testing.T, pkgs ...string) *goPackages {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-json=ImportPath,Dir,Export,GoFiles"}, pkgs...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	w := &goPackages{fset: token.NewFileSet(), pkgs: map[string]goPackage{}}
	for dec := json.NewDecoder(bytes.NewReader(out)); ; {
		var p goPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		w.pkgs[p.ImportPath] = p
	}
	return w
}

func (w *goPackages) parse(t *testing.T, pkg string) []*ast.File {
	t.Helper()
	var files []*ast.File
	for _, name := range w.pkgs[pkg].GoFiles {
		f, err := parser.ParseFile(w.fset, filepath.Join(w.pkgs[pkg].Dir, name), nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// portProblems type-checks files as package path and says where it leaves
// port (see TestConsumersKeepToTheirPorts).
func (w *goPackages) portProblems(t *testing.T, path string, files []*ast.File, port string) []string {
	t.Helper()
	imp := importer.ForCompiler(w.fset, "gc", func(path string) (io.ReadCloser, error) {
		p, ok := w.pkgs[path]
		if !ok || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
	pkg, err := (&types.Config{Importer: imp}).Check(path, w.fset, files, info)
	if err != nil {
		t.Fatalf("type-checking %s: %v", path, err)
	}
	var st *types.Package
	for _, p := range pkg.Imports() {
		if p.Path() == "countersign/store" {
			st = p
		}
	}
	if st == nil {
		t.Fatalf("%s does not import countersign/store", path)
	}
	tx := st.Scope().Lookup("Tx")
	narrow := st.Scope().Lookup("Narrow")
	inTx := map[string]bool{}
	for m := range tx.Type().Underlying().(*types.Interface).Methods() {
		inTx[m.Name()] = true
	}

	// The port and what it is made of.
	name, allowed := port, map[string]bool{}
	var parts []*types.Named
	if port != "" {
		scope := pkg.Scope()
		if p, ok := strings.CutPrefix(port, "countersign/store."); ok {
			scope, name = st.Scope(), "store."+p
			port = p
		}
		obj := scope.Lookup(port)
		if obj == nil {
			t.Fatalf("%s declares no %s", path, port)
		}
		iface, ok := obj.Type().Underlying().(*types.Interface)
		if !ok {
			t.Fatalf("%s's %s is no interface", path, port)
		}
		for m := range iface.Methods() {
			allowed[m.Name()] = true
		}
		if obj.Pkg() != pkg {
			parts = []*types.Named{obj.Type().(*types.Named)}
		}
		for e := range iface.EmbeddedTypes() {
			if n, ok := e.(*types.Named); ok && obj.Pkg() == pkg {
				parts = append(parts, n)
			}
		}
	}

	// Where store.Tx may be named: in the conversions given to store.Narrow.
	var converting [][2]token.Pos
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			fun := call.Fun
			if ix, ok := fun.(*ast.IndexExpr); ok {
				fun = ix.X
			}
			if sel, ok := fun.(*ast.SelectorExpr); ok && info.Uses[sel.Sel] == narrow {
				for _, a := range call.Args {
					if lit, ok := a.(*ast.FuncLit); ok {
						converting = append(converting, [2]token.Pos{lit.Pos(), lit.End()})
					}
				}
			}
			return true
		})
	}

	var problems []string
	at := func(p token.Pos) string {
		pos := w.fset.Position(p)
		return fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line)
	}
	for id, obj := range info.Uses {
		if obj != tx {
			continue
		}
		if !slices.ContainsFunc(converting, func(r [2]token.Pos) bool { return r[0] <= id.Pos() && id.Pos() < r[1] }) {
			problems = append(problems, fmt.Sprintf("%s: %s names store.Tx outside store.Narrow: a transaction is seen whole", at(id.Pos()), path))
		}
	}
	called := map[string]bool{}
	for sel, s := range info.Selections {
		f, ok := s.Obj().(*types.Func)
		if !ok || f.Pkg() != st || !inTx[f.Name()] || !types.IsInterface(s.Recv()) {
			continue
		}
		called[f.Name()] = true
		if !allowed[f.Name()] {
			problems = append(problems, fmt.Sprintf("%s: %s calls %s, which is outside %s", at(sel.Pos()), path, f.Name(), orNone(name)))
		}
	}
	for _, part := range parts {
		iface := part.Underlying().(*types.Interface)
		if !slices.ContainsFunc(slices.Collect(iface.Methods()), func(m *types.Func) bool { return called[m.Name()] }) {
			problems = append(problems, fmt.Sprintf("%s: %s is made of %s.%s and never calls it: leave it out", path, name, part.Obj().Pkg().Name(), part.Obj().Name()))
		}
	}
	slices.Sort(problems)
	return problems
}

func orNone(port string) string {
	if port == "" {
		return "its port (none)"
	}
	return port
}

// keyringHolders are the packages that may name the master keyring
// (sealing.Keyring), make one or call its methods: sealing, which defines
// it; enclave, the key-holder, which alone uses it; and the wiring that
// loads or makes one and hands it to enclave.New (package side, the
// command and the test world).
var keyringHolders = []string{"countersign/sealing", "countersign/enclave", "countersign/enclave/side", "countersign/cmd/countersign", "countersign/servicetest"}

// TestOnlyTheKeyHolderHoldsTheKeyring: outside keyringHolders, no package
// of the module names sealing.Keyring, calls a method of it or a function
// that makes one: the enclave side's services are given enclave.Keys, and
// the door is given narrower interfaces still.
func TestOnlyTheKeyHolderHoldsTheKeyring(t *testing.T) {
	t.Parallel()
	var users []string
	for _, p := range moduleImports(t) {
		if slices.Contains(p.imports, "countersign/sealing") {
			users = append(users, p.path)
		}
	}
	if !slices.Contains(users, "countersign/enclave") || len(users) < 4 {
		t.Fatalf("go list found only %v importing sealing", users)
	}
	w := loadPackages(t, users...)
	for _, pkg := range users {
		uses := w.keyringUses(t, pkg, w.parse(t, pkg))
		switch {
		case pkg == "countersign/enclave" && len(uses) == 0:
			t.Errorf("the check found no use of the keyring in %s, the key-holder: it is broken", pkg)
		case !slices.Contains(keyringHolders, pkg):
			for _, u := range uses {
				t.Errorf("%s: %s holds the master keyring: give it enclave.Keys (or a narrower interface) instead", u, pkg)
			}
		}
	}
}

// keyringUses type-checks files as package path and lists where they name
// sealing.Keyring or a function or method that takes or gives one.
func (w *goPackages) keyringUses(t *testing.T, path string, files []*ast.File) []string {
	t.Helper()
	imp := importer.ForCompiler(w.fset, "gc", func(path string) (io.ReadCloser, error) {
		p, ok := w.pkgs[path]
		if !ok || p.Export == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(p.Export)
	})
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	if _, err := (&types.Config{Importer: imp}).Check(path, w.fset, files, info); err != nil {
		t.Fatalf("type-checking %s: %v", path, err)
	}
	isKeyring := func(typ types.Type) bool {
		if p, ok := typ.(*types.Pointer); ok {
			typ = p.Elem()
		}
		n, ok := typ.(*types.Named)
		return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "countersign/sealing" && n.Obj().Name() == "Keyring"
	}
	var uses []string
	for id, obj := range info.Uses {
		if obj.Pkg() == nil || obj.Pkg().Path() != "countersign/sealing" {
			continue
		}
		holds := false
		switch o := obj.(type) {
		case *types.TypeName:
			holds = isKeyring(o.Type())
		case *types.Func:
			sig := o.Type().(*types.Signature)
			if sig.Recv() != nil && isKeyring(sig.Recv().Type()) {
				holds = true
			}
			for v := range sig.Results().Variables() {
				holds = holds || isKeyring(v.Type())
			}
		}
		if holds {
			pos := w.fset.Position(id.Pos())
			uses = append(uses, fmt.Sprintf("%s:%d", filepath.Base(pos.Filename), pos.Line))
		}
	}
	slices.Sort(uses)
	return uses
}
