package countersign_test

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

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
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(pkgs) < 15 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	for _, line := range pkgs {
		f := strings.Fields(line)
		pkg, got := f[0], []string{}
		for _, imp := range f[1:] {
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
