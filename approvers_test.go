package countersign_test

import (
	"strings"
	"testing"

	"countersign"
)

func TestApproversCheck(t *testing.T) {
	t.Parallel()
	nine := []string{"a1.near", "a2.near", "a3.near", "a4.near", "a5.near", "a6.near", "a7.near", "a8.near", "a9.near"}
	for _, tc := range []struct {
		name     string
		accounts []string
		k        int
		refused  string // "" when the rule is good
	}{
		{"the owner alone", nil, 1, ""},
		{"2 of 3", []string{"bob.near", "carol.near"}, 2, ""},
		{"all of 10", nine, 10, ""},
		{"any of 2", []string{"bob.near"}, 1, ""},
		{"ten others", append(append([]string{}, nine...), "a10.near"), 2, "at most 9"},
		{"a threshold of 0", []string{"bob.near"}, 0, "from 1 to 2"},
		{"a threshold past everyone", []string{"bob.near"}, 3, "from 1 to 2"},
		{"the owner alone needs 2", nil, 2, "from 1 to 1"},
		{"the owner listed", []string{"alice.near"}, 1, "names the owner"},
		{"an account twice", []string{"bob.near", "bob.near"}, 2, "twice"},
		{"not an account id", []string{"Bob"}, 1, "not a NEAR account id"},
		{"an empty account", []string{""}, 1, "not a NEAR account id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := countersign.Approvers{Owner: "alice.near", Accounts: tc.accounts, Threshold: tc.k}.Check()
			switch {
			case tc.refused == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
				t.Fatalf("got %v, want a refusal saying %q", err, tc.refused)
			case err != nil && countersign.ErrorCode(err) != countersign.InvalidRequest:
				t.Fatalf("refused with %s", countersign.ErrorCode(err))
			}
		})
	}
}

func TestApproversCount(t *testing.T) {
	t.Parallel()
	a := countersign.Approvers{Owner: "alice.near", Accounts: []string{"bob.near", "carol.near"}, Threshold: 2}
	for _, tc := range []struct {
		approved []string
		except   string
		want     int
	}{
		{nil, "", 0},
		{[]string{"bob.near", "bob.near"}, "", 1},
		{[]string{"bob.near", "mallory.near", "alice.near"}, "", 2},
		{[]string{"bob.near", "carol.near"}, "carol.near", 1},
	} {
		if got := a.Count(tc.approved, tc.except); got != tc.want {
			t.Errorf("Count(%v, %q) = %d, want %d", tc.approved, tc.except, got, tc.want)
		}
	}
	if !a.Shared() || countersign.OwnerAlone("alice.near").Shared() {
		t.Error("Shared is wrong")
	}
	if !a.Includes("alice.near") || !a.Includes("carol.near") || a.Includes("mallory.near") || a.Includes("") {
		t.Error("Includes is wrong")
	}
	if got := a.String(); got != "2 of alice.near, bob.near and carol.near" {
		t.Errorf("String = %q", got)
	}
	if got := countersign.OwnerAlone("alice.near").String(); got != "alice.near" {
		t.Errorf("String of the owner alone = %q", got)
	}
}
