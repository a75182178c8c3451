package approval_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"countersign/approval"
)

func sha256hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestCheckSignIn(t *testing.T) {
	t.Parallel()
	now := t0
	max := approval.SessionMaxLife + approval.SignInSlack
	cases := []struct {
		name       string
		validUntil time.Time
		ok         bool
	}{
		{"one second ahead", now.Add(time.Second), true},
		{"one day ahead", now.Add(24 * time.Hour), true},
		{"exactly 30 days", now.Add(approval.SessionMaxLife), true},
		{"30 days and 10 minutes", now.Add(max), true},
		{"one second past the slack", now.Add(max + time.Second), false},
		{"31 days", now.Add(31 * 24 * time.Hour), false},
		{"now", now, false},
		{"past", now.Add(-time.Second), false},
		{"zero", time.Time{}, false},
	}
	for _, c := range cases {
		err := approval.CheckSignIn(now, c.validUntil)
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && approval.KindOf(err) != approval.OutOfWindow {
			t.Errorf("%s: want an out-of-window refusal, got %v", c.name, err)
		}
	}
}

func TestCheckConfirmation(t *testing.T) {
	t.Parallel()
	now := t0
	cases := []struct {
		name string
		at   time.Time
		ok   bool
	}{
		{"now", now, true},
		{"ten minutes old", now.Add(-10 * time.Minute), true},
		{"ten minutes and a second old", now.Add(-10*time.Minute - time.Second), false},
		{"an hour old", now.Add(-time.Hour), false},
		{"a minute ahead", now.Add(time.Minute), true},
		{"a minute and a second ahead", now.Add(time.Minute + time.Second), false},
		{"ten minutes ahead", now.Add(10 * time.Minute), false},
	}
	for _, c := range cases {
		err := approval.CheckConfirmation(now, c.at)
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && approval.KindOf(err) != approval.OutOfWindow {
			t.Errorf("%s: want an out-of-window refusal, got %v", c.name, err)
		}
	}
}

func TestCheckRun(t *testing.T) {
	t.Parallel()
	now := t0
	exp := now.Add(time.Hour)
	cases := []struct {
		name    string
		at, exp time.Time
		ok      bool
	}{
		{"now", now, exp, true},
		{"ten minutes ahead", now.Add(10 * time.Minute), exp, true},
		{"ten minutes and a second ahead", now.Add(10*time.Minute + time.Second), exp, false},
		{"thirty minutes behind", now.Add(-30 * time.Minute), exp, true},
		{"thirty minutes and a second behind", now.Add(-30*time.Minute - time.Second), exp, false},
		{"dated at the expiry", now, now, false},
		{"dated after the expiry", now, now.Add(-time.Second), false},
		{"dated a second before the expiry", now, now.Add(time.Second), true},
		{"run after the expiry of an approval given before it", now.Add(-time.Minute), now.Add(-time.Second), true},
	}
	for _, c := range cases {
		err := approval.CheckRun(now, c.at, c.exp)
		if c.ok && err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
		if !c.ok && approval.KindOf(err) != approval.OutOfWindow {
			t.Errorf("%s: want an out-of-window refusal, got %v", c.name, err)
		}
	}
}
