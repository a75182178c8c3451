package httpapi_test

import (
	"go/build"
	"strings"
	"testing"
)

// TestTheDoorNeverHoldsTheMasterKey: the owner-facing side (the inbox and
// the HTTP edge) never imports the sealing package or the enclave side, not
// even through another package of the module.
func TestTheDoorNeverHoldsTheMasterKey(t *testing.T) {
	t.Parallel()
	for _, door := range []string{"countersign/httpapi", "countersign/inbox"} {
		seen := map[string]string{}
		var walk func(pkg, from string)
		walk = func(pkg, from string) {
			if _, ok := seen[pkg]; ok || !strings.HasPrefix(pkg, "countersign") {
				return
			}
			seen[pkg] = from
			p, err := build.Import(pkg, ".", 0)
			if err != nil {
				t.Fatalf("import %s: %v", pkg, err)
			}
			for _, imp := range p.Imports {
				walk(imp, pkg)
			}
		}
		walk(door, "")
		for _, forbidden := range []string{"countersign/sealing", "countersign/enclave"} {
			if from, ok := seen[forbidden]; ok {
				t.Errorf("%s reaches %s (imported by %s)", door, forbidden, from)
			}
		}
		if len(seen) < 3 {
			t.Fatalf("the walk from %s found only %v", door, seen)
		}
	}
}
