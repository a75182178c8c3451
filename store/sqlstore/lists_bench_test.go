package sqlstore_test

import (
	"context"
	"fmt"
	"testing"

	"countersign"
	"countersign/store"
	"countersign/store/storetest"
)

// BenchmarkListPages reads a page of 20 from the lists an owner and an
// agent read, on a service holding 200,000 tasks: 100 owners with 2,000
// each, of which 3 wait and the rest ended, one of each owner's waiting
// tasks shared with the next owner as an approver. The table's statistics
// are gathered first.
//
//	go test -run '^$' -bench ListPages ./store/sqlstore/
func BenchmarkListPages(b *testing.B) {
	ctx := context.Background()
	// A schema of its own: the statistics gathered here stay out of the
	// pool's schemas, which later tests take.
	db := storetest.FreshPostgres(b)
	k, c := storetest.NewTask("template", "owner-0.near", "bot.near")
	if err := db.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, k, c) }); err != nil {
		b.Fatal(err)
	}
	const owners, each = 100, 2000
	execAll(b, schemaConn(b, db, nil),
		fmt.Sprintf(`INSERT INTO tasks SELECT (jsonb_populate_record(t, jsonb_build_object(
			'id', 'task-' || g, 'owner', 'owner-' || (g %% %d) || '.near', 'created_at', t.created_at + g,
			'state', CASE WHEN g >= %d THEN 'open' ELSE 'cancelled' END,
			'closed_at', CASE WHEN g >= %d THEN NULL ELSE t.created_at + g END))).*
			FROM tasks t, generate_series(0, %d) g WHERE t.id = 'template'`, owners, owners*(each-3), owners*(each-3), owners*each-1),
		`DELETE FROM tasks WHERE id = 'template'`,
		fmt.Sprintf(`INSERT INTO task_approvers (task_id, account)
			SELECT 'task-' || g, 'owner-' || ((g + 1) %% %d) || '.near' FROM generate_series(%d, %d) g`, owners, owners*(each-1), owners*each-1),
		`ANALYZE tasks`, `ANALYZE task_approvers`)
	var middle store.Task
	err := db.Tx(ctx, func(tx store.Tx) error {
		page, err := tx.InboxTasks(ctx, "owner-7.near", false, nil, 1000)
		if len(page) == 1000 {
			middle = page[999]
		}
		return err
	})
	if err != nil || middle.ID == "" {
		b.Fatalf("no history to page through: %v", err)
	}
	for _, bm := range []struct {
		name string
		want int
		read func(tx store.Tx) ([]store.Task, error)
	}{
		{"waiting", 4, func(tx store.Tx) ([]store.Task, error) { return tx.InboxTasks(ctx, "owner-7.near", true, nil, 20) }},
		{"history", 20, func(tx store.Tx) ([]store.Task, error) { return tx.InboxTasks(ctx, "owner-7.near", false, nil, 20) }},
		{"history-page-51", 20, func(tx store.Tx) ([]store.Task, error) {
			return tx.InboxTasks(ctx, "owner-7.near", false, &middle, 20)
		}},
		{"agent", 20, func(tx store.Tx) ([]store.Task, error) {
			return tx.PreparerTasks(ctx, "owner-7.near", k.ProjectUUID, "bot.near", "", 20)
		}},
		{"agent-waiting", 3, func(tx store.Tx) ([]store.Task, error) {
			return tx.PreparerTasks(ctx, "owner-7.near", k.ProjectUUID, "bot.near", countersign.StateOpen, 20)
		}},
	} {
		b.Run(bm.name, func(b *testing.B) {
			for b.Loop() {
				err := db.Tx(ctx, func(tx store.Tx) error {
					page, err := bm.read(tx)
					if err == nil && len(page) != bm.want {
						err = fmt.Errorf("a page of %d tasks, want %d", len(page), bm.want)
					}
					return err
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
