package sqlstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"countersign"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

func TestConformancePostgres(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.Postgres(t) })
}

func TestConformanceSQLite(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return storetest.SQLite(t) })
}

// TestEnqueueAnswerInTheTransaction: the answer job is queued if and only if
// the transaction commits, and carries ids only.
func TestEnqueueAnswerInTheTransaction(t *testing.T) {
	t.Parallel()
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

// TestOutboxFollowsCommittedChanges: an owner with a webhook gets an event,
// and a queued delivery, for each state change that has one, written with
// the change; a rolled back change, an owner without a webhook and a
// notice's Got it write none.
func TestOutboxFollowsCommittedChanges(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
		tx := func(f func(store.Tx) error) {
			t.Helper()
			if err := db.Tx(ctx, f); err != nil {
				t.Fatal(err)
			}
		}
		tx(func(tx store.Tx) error {
			return tx.PutWebhook(ctx, store.Webhook{Owner: "alice.near", ID: "wh1", SetAt: t0, SetByKey: "k", KeyID: 1, Sealed: []byte("x")})
		})
		insert := func(id, owner, kind string) {
			k, c := storetest.NewTask(id, owner, "bot.near")
			if kind == "notice" {
				k.Kind, k.Operation, k.Supplies, k.ReplyPubkey = "notice", "", "", ""
			}
			tx(func(tx store.Tx) error { return tx.InsertTask(ctx, k, c) })
		}
		move := func(id string, k countersign.Kind, from, to countersign.State, by countersign.Actor) {
			tx(func(tx store.Tx) error {
				m, err := countersign.Transition(k, from, to, by, "")
				if err != nil {
					return err
				}
				_, err = tx.MoveTask(ctx, store.Move{ID: id, Move: m, At: t0, AnswerRun: "run2"})
				return err
			})
		}
		insert("run1-1", "alice.near", "input")
		move("run1-1", countersign.KindInput, countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner)
		move("run1-1", countersign.KindInput, countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform)
		move("run1-1", countersign.KindInput, countersign.StateAnswering, countersign.StateDone, countersign.ActorPlatform)
		k, c := storetest.NewTask("run3-1", "alice.near", "bot.near")
		_ = db.Tx(ctx, func(tx store.Tx) error {
			_ = tx.InsertTask(ctx, k, c)
			return errors.New("refused")
		})
		insert("run4-1", "bob.near", "input")
		insert("run5-1", "alice.near", "notice")
		move("run5-1", countersign.KindNotice, countersign.StateOpen, countersign.StateDone, countersign.ActorOwner)

		q := "SELECT task_id || ' ' || type || ' ' || run FROM webhook_events ORDER BY at, type"
		var got []string
		if db.Postgres() != nil {
			rows, _ := db.Postgres().Query(ctx, q)
			for rows.Next() {
				var s string
				_ = rows.Scan(&s)
				got = append(got, s)
			}
			rows.Close()
		} else {
			rows, _ := db.SQLite().QueryContext(ctx, q)
			for rows.Next() {
				var s string
				_ = rows.Scan(&s)
				got = append(got, s)
			}
			rows.Close()
		}
		want := "[run1-1 task_answered run2 run1-1 task_approved run2 run1-1 task_created  run5-1 task_created ]"
		if fmt.Sprint(got) != want {
			t.Fatalf("outbox %v\nwant %v", got, want)
		}
		var jobs int
		jq := "SELECT COUNT(*) FROM river_job WHERE kind = 'webhook_delivery'"
		if db.Postgres() != nil {
			_ = db.Postgres().QueryRow(ctx, jq).Scan(&jobs)
		} else {
			_ = db.SQLite().QueryRowContext(ctx, jq).Scan(&jobs)
		}
		if jobs != 4 {
			t.Fatalf("%d deliveries queued for 4 events", jobs)
		}
	})
}

// TestSchemaStatusFollowsMigration: an empty database is behind, on its own
// tables and on the job queue's; one migration brings both current, and a
// second one applies nothing.
func TestSchemaStatusFollowsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	stores := map[string]func(t *testing.T) *sqlstore.DB{
		"postgres": func(t *testing.T) *sqlstore.DB {
			db, err := sqlstore.OpenPostgres(ctx, storetest.PostgresURL(), storetest.NewSchema(t))
			if err != nil {
				t.Fatal(err)
			}
			return db
		},
		"sqlite": func(t *testing.T) *sqlstore.DB {
			db, err := sqlstore.OpenSQLite(ctx, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return db
		},
	}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			defer db.Close()
			st, err := db.Schema(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.Current != 0 || st.JobsCurrent || !st.Behind() {
				t.Fatalf("an empty database reports %+v", st)
			}
			if applied, err := db.Migrate(ctx); err != nil || len(applied) != st.Needed {
				t.Fatalf("migrate applied %v, %v; want %d migrations", applied, err, st.Needed)
			}
			if st, err = db.Schema(ctx); err != nil || st.Current != st.Needed || !st.JobsCurrent || st.Behind() {
				t.Fatalf("a migrated database reports %+v, %v", st, err)
			}
			if applied, err := db.Migrate(ctx); err != nil || len(applied) != 0 {
				t.Fatalf("a second migration applied %v, %v", applied, err)
			}
		})
	}
}
