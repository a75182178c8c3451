package httpapi_test

import (
	"testing"

	"countersign/client"
	"countersign/servicetest"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestActivityIsTheOwners: an owner's history is listed to that owner's
// sessions only: another owner lists nothing of it and cannot page from
// one of its entries (refused as a missing one), and neither an agent's key
// nor no credential lists anything.
func TestActivityIsTheOwners(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		w := servicetest.New(t, db)
		alice := w.Owner
		task := w.Pay()
		if _, err := alice.Client.Reject(ctx, task, nil); err != nil {
			t.Fatal(err)
		}
		mine, err := alice.Client.Activity(ctx, client.ActivityQuery{})
		if err != nil || len(mine.Entries) != 1 || mine.Entries[0].TaskID != task || mine.Entries[0].DeviceCopy == nil {
			t.Fatalf("alice's history: %+v %v", mine, err)
		}

		bob := w.NewOwner()
		for name, q := range map[string]client.ActivityQuery{
			"everything":      {},
			"alice's project": {Project: "ledger"},
			"alice's agent":   {Preparer: w.Agent},
		} {
			page, err := bob.Client.Activity(ctx, q)
			if err != nil || len(page.Entries) != 0 || page.More {
				t.Errorf("bob lists %s: %+v %v", name, page, err)
			}
		}
		_, mineErr := bob.Client.Activity(ctx, client.ActivityQuery{Before: task})
		_, noneErr := bob.Client.Activity(ctx, client.ActivityQuery{Before: task + "0"})
		if reason(mineErr) != "invalid_request" || errString(mineErr) != errString(noneErr) {
			t.Errorf("bob paging from alice's entry: %v; from none: %v", mineErr, noneErr)
		}
		if _, err := (&client.Client{BaseURL: w.URL, Session: w.AgentKey}).Activity(ctx, client.ActivityQuery{}); reason(err) != "session_required" {
			t.Errorf("an agent key as a session: %v", err)
		}
		if _, err := (&client.Client{BaseURL: w.URL}).Activity(ctx, client.ActivityQuery{}); reason(err) != "session_required" {
			t.Errorf("no credential: %v", err)
		}
	})
}
