package httpapi_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestTheDoorNeverHoldsTheMasterKey: the owner-facing side (the inbox and
// the HTTP edge) never imports the sealing package or the enclave side (the
// key-holder or any of its services), not even through another package of
// the module.
func TestTheDoorNeverHoldsTheMasterKey(t *testing.T) {
	t.Parallel()
	for _, door := range []string{"countersign/httpapi", "countersign/inbox"} {
		out, err := exec.Command("go", "list", "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, door).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", door, err)
		}
		// seen maps each package of the module the door reaches to one
		// package of the module that imports it.
		seen := map[string]string{}
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			f := strings.Fields(line)
			if !strings.HasPrefix(f[0], "countersign") {
				continue
			}
			if _, ok := seen[f[0]]; !ok {
				seen[f[0]] = ""
			}
			for _, imp := range f[1:] {
				if strings.HasPrefix(imp, "countersign") {
					seen[imp] = f[0]
				}
			}
		}
		for pkg, from := range seen {
			for _, forbidden := range []string{"countersign/sealing", "countersign/enclave"} {
				if pkg == forbidden || strings.HasPrefix(pkg, forbidden+"/") {
					t.Errorf("%s reaches %s (imported by %s)", door, pkg, from)
				}
			}
		}
		if len(seen) < 3 {
			t.Fatalf("the walk from %s found only %v", door, seen)
		}
	}
}
