package connectors_test

import (
	"os/exec"
	"strings"
	"testing"
)

// deps lists what `go list -deps` says a package reaches, and whether each is
// in the standard library.
func deps(t *testing.T, pkg string) map[string]bool {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{.Standard}}", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, std, _ := strings.Cut(line, " ")
		seen[path] = std == "true"
	}
	return seen
}

// heavy is what a connector author must never pull in by importing the SDK:
// the store, its databases and job queue, the wallet cryptography, the
// enclave side.
var heavy = []string{
	"countersign/store", "countersign/store/sqlstore", "countersign/enclave",
	"countersign/approval", "countersign/sealing", "countersign/webhook",
	"github.com/jackc/pgx/v5", "github.com/riverqueue/river", "modernc.org/sqlite",
	"github.com/ethereum/go-ethereum/crypto",
}

// smallDeps are what a connector may depend on besides the standard
// library.
var smallDeps = map[string]bool{
	"countersign": true, "countersign/policy": true, "countersign/connectors": true,
	"countersign/egress": true, "code.dny.dev/ssrf": true,
}

func reached(seen map[string]bool) []string {
	var out []string
	for _, h := range heavy {
		for p := range seen {
			if p == h || strings.HasPrefix(p, h+"/") {
				out = append(out, p)
			}
		}
	}
	return out
}

// TestTheSDKIsSmall: the connector SDK, the probe, GitHub and Mercury depend
// on the domain, policy, the egress guard (with its one small dependency)
// and the standard library only.
func TestTheSDKIsSmall(t *testing.T) {
	t.Parallel()
	for _, pkg := range []string{"countersign/connectors", "countersign/connectors/probe", "countersign/connectors/github", "countersign/connectors/mercury"} {
		seen := deps(t, pkg)
		if _, ok := seen["countersign"]; !ok || len(seen) < 10 {
			t.Fatalf("go list -deps %s found only %d packages: the walk is broken", pkg, len(seen))
		}
		if bad := reached(seen); len(bad) > 0 {
			t.Errorf("%s reaches %v", pkg, bad)
		}
		for p, std := range seen {
			if !std && p != pkg && !smallDeps[p] {
				t.Errorf("%s depends on %s, beyond the domain, policy, egress and the standard library", pkg, p)
			}
		}
	}
	// The check can fail: the enclave side reaches every heavy package.
	if got := reached(deps(t, "countersign/enclave/...")); len(got) < 6 {
		t.Fatalf("the heavy list matched only %v in the enclave's dependencies", got)
	}
}

// TestTheDomainIsALeaf: the root package imports the standard library only.
func TestTheDomainIsALeaf(t *testing.T) {
	t.Parallel()
	seen := deps(t, "countersign")
	if len(seen) < 10 {
		t.Fatalf("go list -deps countersign found only %d packages", len(seen))
	}
	for p, std := range seen {
		if !std && p != "countersign" {
			t.Errorf("the domain package depends on %s", p)
		}
	}
	// The check can fail: the SDK is not standard library.
	if std := deps(t, "countersign/connectors")["countersign/policy"]; std {
		t.Fatal("countersign/policy is taken for the standard library")
	}
}
