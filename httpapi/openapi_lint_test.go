package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"countersign/connectors/github"
	"countersign/connectors/gmail"
	"countersign/connectors/mercury"
	"countersign/servicetest"
	"countersign/store/storetest"
)

// lintDir holds the pinned OpenAPI linter (npm ci --prefix it).
const lintDir = "testdata/openapi-lint"

// TestOpenAPILints: the document GET /openapi.json serves, with every
// compiled-in connector, passes Redocly's recommended rules with warnings
// as errors (testdata/openapi-lint/redocly.yaml), as the linter pinned in
// testdata/openapi-lint/package.json reads them. Under CI a missing linter
// fails the test.
func TestOpenAPILints(t *testing.T) {
	t.Parallel()
	bin, err := filepath.Abs(filepath.Join(lintDir, "node_modules", ".bin", "redocly"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		msg := "the OpenAPI linter is not installed: run npm ci --prefix httpapi/" + lintDir
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	w := servicetest.New(t, storetest.SQLite(t), servicetest.WithConnector(github.New(github.Options{})),
		servicetest.WithConnector(gmail.New(gmail.Config{})), servicetest.WithConnector(mercury.New(mercury.Config{})))
	resp, err := http.Get(w.URL + "/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	doc := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(doc, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	config, _ := filepath.Abs(filepath.Join(lintDir, "redocly.yaml"))
	cmd := exec.Command(bin, "lint", "--config", config, "--format", "json", doc)
	// The linter sends nothing anywhere and looks for no update.
	cmd.Env = append(os.Environ(), "REDOCLY_TELEMETRY=off", "REDOCLY_SUPPRESS_UPDATE_NOTICE=true")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var report struct {
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &report); err != nil {
		t.Fatalf("the linter's report does not read (%v): %v\n%s\n%s", runErr, err, stdout.String(), stderr.String())
	}
	for _, p := range report.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		t.Errorf("%s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
	}
	if runErr != nil && len(report.Problems) == 0 {
		t.Fatalf("the linter failed: %v\n%s", runErr, stderr.String())
	}
}
