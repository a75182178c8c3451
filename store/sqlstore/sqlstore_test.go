package sqlstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

func TestConformancePostgres(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.Postgres(t) })
}

func TestConformanceSQLite(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.SQLite(t) })
}

// TestEnqueueAnswerInTheTransaction: the answer job is queued if and only if
// the transaction commits, and carries ids only.
func TestEnqueueAnswerInTheTransaction(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		if err := db.Tx(ctx, func(tx store.Tx) error {
			return tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: "gone-1", Run: "run-gone"})
		}); err != nil {
			t.Fatal(err)
		}
		_ = db.Tx(ctx, func(tx store.Tx) error {
			_ = tx.EnqueueAnswer(ctx, store.AnswerJob{TaskID: "rolledback-1", Run: "run-x"})
			return errors.New("refused")
		})
		var kinds, args []string
		query := "SELECT kind, CAST(args AS TEXT) FROM river_job ORDER BY id"
		if db.Postgres() != nil {
			rows, err := db.Postgres().Query(ctx, query)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var k, a string
				_ = rows.Scan(&k, &a)
				kinds, args = append(kinds, k), append(args, a)
			}
			rows.Close()
		} else {
			rows, err := db.SQLite().QueryContext(ctx, "SELECT kind, json(args) FROM river_job ORDER BY id")
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var k, a string
				_ = rows.Scan(&k, &a)
				kinds, args = append(kinds, k), append(args, a)
			}
			rows.Close()
		}
		if len(kinds) != 1 || kinds[0] != "answer_run" {
			t.Fatalf("jobs %v %v", kinds, args)
		}
		var got map[string]string
		if err := json.Unmarshal([]byte(args[0]), &got); err != nil || len(got) != 2 || got["task_id"] != "gone-1" || got["run"] != "run-gone" {
			t.Fatalf("job args %s", args[0])
		}
	})
}
