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

// TestProjectTextStrict: a project text whose members repeat (ignoring
// case, at any depth, the policy and credentials included) or that writes
// one of its members in another case is refused, naming the member.
func TestProjectTextStrict(t *testing.T) {
	t.Parallel()
	const twice = " twice (member names are compared ignoring case)"
	for _, c := range []struct{ name, text, want string }{
		{"connector twice", `{"connector":"probe","connector":"ledger","policy":{},"agents":[]}`, "the project text names `connector`" + twice},
		{"agents twice in two cases", `{"connector":"probe","policy":{},"agents":[],"AGENTS":["bot.near"]}`, "the project text names `agents`" + twice},
		{"connector in another case", `{"Connector":"probe","policy":{},"agents":[]}`, "the project text writes `connector` in another case"},
		{"an unknown member that folds to nothing known", `{"connector":"probe","policy":{},"agents":[],"credentials":null,"\u212a":1}`, "the project text is not {connector, policy, credentials?, agents}"},
		{"a policy member twice", `{"connector":"ledger","policy":{"confirm":["pay"],"confirm":[]},"agents":[]}`, "the project text names `confirm`" + twice},
		{"a policy member twice in two cases", `{"connector":"ledger","policy":{"confirm":[],"Confirm":["pay"]},"agents":[]}`, "the project text names `confirm`" + twice},
		{"a credentials member twice", `{"connector":"ledger","policy":{},"credentials":{"token":"a","TOKEN":"b"},"agents":[]}`, "the project text names `token`" + twice},
	} {
		_, err := parseProjectText(c.text)
		if countersign.ErrorCode(err) != countersign.InvalidRequest || countersign.ErrorMessage(err) != c.want {
			t.Errorf("%s: got %v, want invalid_request: %s", c.name, err, c.want)
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
