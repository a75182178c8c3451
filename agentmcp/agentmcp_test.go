package agentmcp

import (
	"strings"
	"testing"
)

func TestCallBody(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		`{}`:                    `{"operation":"pay"}`,
		` { } `[1:]:             `{"operation":"pay"}`,
		`{"amount":1}`:          `{"operation":"pay","amount":1}`,
		`{ "memo": "a\"b" }`:    `{"operation":"pay","memo": "a\"b" }`,
		`{"operation":"other"}`: `{"operation":"pay","operation":"other"}`,
	} {
		if got := string(callBody("pay", []byte(strings.TrimSpace(args)))); got != want {
			t.Errorf("%s: %s, want %s", args, got, want)
		}
	}
}
