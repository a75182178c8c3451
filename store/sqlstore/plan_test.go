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
	cfg, err := pgx.ParseConfig(storetest.PostgresURL())
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = db.SchemaName()
	var mu sync.Mutex
	var plans []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		plans = append(plans, n.Message)
		mu.Unlock()
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	// The plan is told as a notice: auto_explain, which only a superuser
	// loads (as the tests' default server has).
	if _, err := c.Exec(ctx, "LOAD 'auto_explain'"); err != nil {
		t.Skipf("auto_explain cannot be loaded here: %v", err)
	}
	for _, set := range []string{"SET auto_explain.log_min_duration = 0", "SET auto_explain.log_level = notice",
		"SET plan_cache_mode = force_generic_plan"} {
		if _, err := c.Exec(ctx, set); err != nil {
			t.Fatal(err)
		}
	}
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
		mu.Lock()
		plans = nil
		mu.Unlock()
		if tag, err := c.Exec(ctx, q, args...); err != nil || tag.RowsAffected() != 1 {
			t.Fatalf("%s → %s: %v, %d rows", s.from, s.to, err, tag.RowsAffected())
		}
		mu.Lock()
		plan := strings.Join(plans, "\n")
		mu.Unlock()
		if !strings.Contains(plan, "Index Scan using tasks_pkey on tasks") {
			t.Errorf("%s → %s finds its task by another way:\n%s", s.from, s.to, plan)
		}
	}
}
