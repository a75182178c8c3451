package sqlstore_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"countersign"
	"countersign/store"
	"countersign/store/sqlstore"
	"countersign/store/storetest"
)

// TestMovesFindTheTaskByItsID: with hundreds of tasks in the state a move
// leaves, each move's UPDATE finds its task through the primary key, on the
// generic plan PostgreSQL keeps for a prepared statement (where the state is
// a parameter) and before the table's statistics were gathered, as on a new
// database. With an index beginning with the state, the planner took that
// index (the two cost the same to it) and walked every task in the state,
// a move growing with the inbox: the bench saw it in three moves of four.
func TestMovesFindTheTaskByItsID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Postgres(t)
	const n = 300
	err := db.Tx(ctx, func(tx store.Tx) error {
		for i := range n {
			k, c := storetest.NewTask(fmt.Sprintf("plan-%03d", i), "alice.near", "bot.near")
			k.ExpiresAt = time.Now().Add(time.Hour)
			if err := tx.InsertTask(ctx, k, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	c, plans := planConn(t, db, "SET plan_cache_mode = force_generic_plan")
	steps := []struct {
		from, to countersign.State
		by       countersign.Actor
	}{
		{countersign.StateOpen, countersign.StateApproved, countersign.ActorOwner},
		{countersign.StateApproved, countersign.StateAnswering, countersign.ActorPlatform},
		{countersign.StateAnswering, countersign.StateDone, countersign.ActorPlatform},
	}
	for i, s := range steps {
		mv, err := countersign.Transition("input", s.from, s.to, s.by, "")
		if err != nil {
			t.Fatal(err)
		}
		m := store.Move{ID: fmt.Sprintf("plan-%03d", i*7), Move: mv, At: time.Now(), Run: "run1"}
		if s.to == countersign.StateApproved {
			m.Unexpired, m.AnswerRun = time.Now(), "run1"
		}
		q, args := sqlstore.MoveStatement(m)
		// Each step moves its own task along the steps before it first.
		for _, before := range steps[:i] {
			pm, _ := countersign.Transition("input", before.from, before.to, before.by, "")
			bq, bargs := sqlstore.MoveStatement(store.Move{ID: m.ID, Move: pm, At: time.Now(), Run: "run1", AnswerRun: "run1"})
			if _, err := c.Exec(ctx, bq, bargs...); err != nil {
				t.Fatal(err)
			}
		}
		plans()
		if tag, err := c.Exec(ctx, q, args...); err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("%s → %s: %v, %d rows", s.from, s.to, err, tag.RowsAffected())
		}
		plan := plans()
		if !strings.Contains(plan, "Index Scan using tasks_pkey on tasks") {
			t.Errorf("%s → %s finds its task by another way:\n%s", s.from, s.to, plan)
		}
	}
}

// planConn is a connection to db's schema on which PostgreSQL tells the plan
// of every statement, executed, as a notice (auto_explain, which only a
// superuser loads, as the tests' default server has; the test is skipped
// where it cannot be), after the settings given. plans returns the plans
// told since its last call.
func planConn(t *testing.T, db *sqlstore.DB, settings ...string) (c *pgx.Conn, plans func() string) {
	t.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = db.SchemaName()
	var mu sync.Mutex
	var told []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		told = append(told, n.Message)
		mu.Unlock()
	}
	c, err = pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(ctx) })
	if _, err := c.Exec(ctx, "LOAD 'auto_explain'"); err != nil {
		t.Skipf("auto_explain cannot be loaded here: %v", err)
	}
	for _, set := range append([]string{"SET auto_explain.log_min_duration = 0", "SET auto_explain.log_level = notice",
		"SET auto_explain.log_analyze = on"}, settings...) {
		if _, err := c.Exec(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
	return c, func() string {
		mu.Lock()
		defer mu.Unlock()
		p := strings.Join(told, "\n")
		told = nil
		return p
	}
}

// TestOwnerLoadReadsOnlyActiveTasks: the owner's load, read under the
// owner's lock at every task opened, reads the owner's open and approved
// tasks and none of the ended ones, however many the owner has had, on the
// plan PostgreSQL keeps for a prepared statement and on a plan made for the
// values, before the table's statistics were gathered, as on a new
// database. Through (owner, state, created_at) the planner matched the
// owner alone there and read every task the owner ever had: the bench saw
// the read grow from 0.02 to 0.3 ms within ten seconds of opens and
// cancels.
func TestOwnerLoadReadsOnlyActiveTasks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Postgres(t)
	const ended = 300
	err := db.Tx(ctx, func(tx store.Tx) error {
		for i := range ended + 3 {
			k, c := storetest.NewTask(fmt.Sprintf("load-%03d", i), "alice.near", "bot.near")
			k.ExpiresAt = time.Now().Add(time.Hour)
			k.ContentSize = 100
			if err := tx.InsertTask(ctx, k, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
		t.Run(mode, func(t *testing.T) {
			c, plans := planConn(t, db, "SET plan_cache_mode = "+mode)
			// All but three ended; one of those three approved.
			if _, err := c.Exec(ctx, `UPDATE tasks SET state = 'cancelled', closed_at = 1 WHERE id < 'load-300'`); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Exec(ctx, `UPDATE tasks SET state = 'approved' WHERE id = 'load-302'`); err != nil {
				t.Fatal(err)
			}
			q, args := sqlstore.OwnerLoadStatement("alice.near", "bot.near")
			plans()
			var open, active, waiting int64
			if err := c.QueryRow(ctx, q, args...).Scan(&open, &active, &waiting); err != nil {
				t.Fatal(err)
			}
			if open != 2 || active != 3 || waiting != 200 {
				t.Errorf("the load read %d open, %d active, %d bytes waiting; want 2, 3, 200", open, active, waiting)
			}
			plan := plans()
			if !strings.Contains(plan, "tasks_owner_active") || strings.Contains(plan, "Rows Removed by Filter") {
				t.Errorf("the load reads more than the owner's active tasks:\n%s", plan)
			}
		})
	}
}
