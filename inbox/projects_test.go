package inbox

import (
	"encoding/json"
	"strings"
	"testing"

	"countersign"
)

func TestParseProjectText(t *testing.T) {
	t.Parallel()
	good := `{"connector":"probe","policy":{"confirm":[]},"agents":["bot.near"]}`
	p, err := parseProjectText(good)
	if err != nil || p.Connector != "probe" || string(p.Policy) != `{"confirm":[]}` || p.Credentials != nil {
		t.Fatalf("good text: %+v %v", p, err)
	}
	for name, text := range map[string]string{
		"not JSON":          `{`,
		"two values":        good + ` {}`,
		"unknown member":    `{"connector":"probe","policy":{},"agents":[],"owner":"x"}`,
		"policy not object": `{"connector":"probe","policy":[],"agents":[]}`,
		"no policy":         `{"connector":"probe","agents":[]}`,
		"policy too large":  `{"connector":"probe","policy":{"x":"` + strings.Repeat("a", 64<<10) + `"},"agents":[]}`,
		"bad agent":         `{"connector":"probe","policy":{},"agents":["Bot"]}`,
	} {
		if _, err := parseProjectText(text); countersign.ErrorCode(err) != countersign.InvalidRequest {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func FuzzParseProjectText(f *testing.F) {
	f.Add(`{"connector":"probe","policy":{},"agents":["bot.near"]}`)
	f.Add(`{"connector":"ledger","policy":{"confirm":["pay"]},"credentials":{"t":1},"agents":[]}`)
	f.Fuzz(func(t *testing.T, text string) {
		p, err := parseProjectText(text)
		if err != nil {
			if countersign.ErrorCode(err) != countersign.InvalidRequest {
				t.Fatalf("a refusal that is not invalid_request: %v", err)
			}
			return
		}
		if !json.Valid(p.Policy) || p.Policy[0] != '{' || len(p.Policy) > countersign.MaxPolicyBytes {
			t.Fatalf("accepted a policy that is not a small JSON object: %q", p.Policy)
		}
	})
}
