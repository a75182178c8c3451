package sqlstore

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
	"testing"
)

// The two databases differ in one place each: postgres.go and sqlite.go,
// behind the engine. Everywhere else the store is written once: no file
// asks which database it is on (a dialect compared, a pool or file tested
// for nil, a querier or driver transaction asserted or switched on).
func TestDialectsDifferInOnePlaceEach(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	engineFiles := map[string]bool{"postgres.go": true, "sqlite.go": true}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if engineFiles[name] || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, p := range dialectQuestions(f) {
			t.Errorf("%s: %s: the databases' differences go behind the engine (postgres.go, sqlite.go)", fset.Position(p.pos), p.what)
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d files; the store has more", checked)
	}
}

// The check finds what it is meant to find.
func TestDialectQuestionsFound(t *testing.T) {
	t.Parallel()
	src := `package sqlstore
func a(t *tx) {
	if t.dialect == migrations.Postgres {}
	if t.db.pg != nil {}
	if db.lite == nil {}
	_, _ = t.raw.(pgQuerier)
	switch t.native.(type) {
	case *sql.Tx:
	}
	_ = stx.(*tx)
}`
	f, err := parser.ParseFile(token.NewFileSet(), "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := dialectQuestions(f)
	if len(got) != 5 {
		t.Fatalf("found %d of the 5 questions: %v", len(got), got)
	}
}

type question struct {
	pos  token.Pos
	what string
}

func dialectQuestions(f *ast.File) []question {
	var out []question
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "migrations" && (n.Sel.Name == "Postgres" || n.Sel.Name == "SQLite") {
				out = append(out, question{n.Pos(), "names the dialect " + n.Sel.Name})
			}
		case *ast.BinaryExpr:
			for _, side := range []ast.Expr{n.X, n.Y} {
				if s, ok := side.(*ast.SelectorExpr); ok && (s.Sel.Name == "pg" || s.Sel.Name == "lite") {
					out = append(out, question{n.Pos(), "tests the database's " + s.Sel.Name})
				}
			}
		case *ast.TypeAssertExpr:
			if n.Type != nil && driverType(n.Type) {
				out = append(out, question{n.Pos(), "asserts " + types.ExprString(n.Type)})
			}
		case *ast.TypeSwitchStmt:
			for _, c := range n.Body.List {
				for _, e := range c.(*ast.CaseClause).List {
					if driverType(e) {
						out = append(out, question{e.Pos(), "switches on " + types.ExprString(e)})
					}
				}
			}
		}
		return true
	})
	return out
}

// driverType says whether e names a type of one database's side: its
// querier, its engine or its driver's transaction.
func driverType(e ast.Expr) bool {
	switch types.ExprString(e) {
	case "pgQuerier", "liteQuerier", "queueTx", "pgEngine", "*pgEngine", "liteEngine", "*liteEngine",
		"*sql.Tx", "pgx.Tx", "*pgxpool.Conn", "*pgxpool.Pool", "*sql.DB":
		return true
	}
	return false
}
