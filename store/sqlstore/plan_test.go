package sqlstore_test

import (
	"context"
	"crypto/rand"
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
	db := planDB(t, alicesTasks("plan", 300))
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

// planDB is a store on a schema of the test's own holding tasks, their
// table without autovacuum, so that the planner has no statistics but those
// a test gathers itself: autovacuum analyzes a table a while after its first
// fifty changes, at a moment a test cannot choose.
func planDB(t *testing.T, tasks []store.Task) *sqlstore.DB {
	t.Helper()
	db := storetest.FreshPostgres(t)
	execAll(t, schemaConn(t, db, nil), "ALTER TABLE tasks SET (autovacuum_enabled = off)")
	err := db.Tx(context.Background(), func(tx store.Tx) error {
		for _, k := range tasks {
			_, c := storetest.NewTask(k.ID, k.Owner, k.Preparer)
			if err := tx.InsertTask(context.Background(), k, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// alicesTasks are n open tasks of alice's named prefix-000 on, expiring in
// an hour.
func alicesTasks(prefix string, n int) []store.Task {
	tasks := make([]store.Task, n)
	for i := range tasks {
		tasks[i], _ = storetest.NewTask(fmt.Sprintf("%s-%03d", prefix, i), "alice.near", "bot.near")
		tasks[i].ExpiresAt = time.Now().Add(time.Hour)
	}
	return tasks
}

// schemaConn is a connection of the test's own to db's schema, closed when
// the test ends; configure, if not nil, sets it up before it connects.
func schemaConn(tb testing.TB, db *sqlstore.DB, configure func(*pgx.ConnConfig)) *pgx.Conn {
	tb.Helper()
	ctx := context.Background()
	cfg, err := pgx.ParseConfig(storetest.PostgresURL())
	if err != nil {
		tb.Fatal(err)
	}
	cfg.RuntimeParams["search_path"] = db.SchemaName()
	if configure != nil {
		configure(cfg)
	}
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close(ctx) })
	return c
}

// execAll runs each statement on c in turn.
func execAll(tb testing.TB, c *pgx.Conn, stmts ...string) {
	tb.Helper()
	for _, q := range stmts {
		if _, err := c.Exec(context.Background(), q); err != nil {
			tb.Fatalf("%s: %v", q, err)
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
	var mu sync.Mutex
	var told []string
	c = schemaConn(t, db, func(cfg *pgx.ConnConfig) {
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			mu.Lock()
			told = append(told, n.Message)
			mu.Unlock()
		}
	})
	if _, err := c.Exec(ctx, "LOAD 'auto_explain'"); err != nil {
		t.Skipf("auto_explain cannot be loaded here: %v", err)
	}
	execAll(t, c, append([]string{"SET auto_explain.log_min_duration = 0", "SET auto_explain.log_level = notice",
		"SET auto_explain.log_analyze = on"}, settings...)...)
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
// database. (With them, and 300 tasks, the planner reads the table whole,
// rightly: it is a few pages.) Through (owner, state, created_at) the
// planner matched the owner alone there and read every task the owner ever
// had: the bench saw the read grow from 0.02 to 0.3 ms within ten seconds
// of opens and cancels.
func TestOwnerLoadReadsOnlyActiveTasks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tasks := alicesTasks("load", 303)
	for i := range tasks {
		tasks[i].ContentSize = 100
	}
	db := planDB(t, tasks)
	// All but three ended; one of those three approved.
	execAll(t, schemaConn(t, db, nil),
		`UPDATE tasks SET state = 'cancelled', closed_at = 1 WHERE id < 'load-300'`,
		`UPDATE tasks SET state = 'approved' WHERE id = 'load-302'`)
	for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
		t.Run(mode, func(t *testing.T) {
			c, plans := planConn(t, db, "SET plan_cache_mode = "+mode)
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
			// The gate reads the same load with the mutes and the webhook.
			q, args = sqlstore.OwnerGateStatement("alice.near", "bot.near", "probe")
			var muted int64
			var webhook *string
			if err := c.QueryRow(ctx, q, args...).Scan(&open, &active, &waiting, &muted, &webhook); err != nil {
				t.Fatal(err)
			}
			if muted != 0 || open != 2 || active != 3 || waiting != 200 || webhook != nil {
				t.Errorf("the gate read %d mutes, %d open, %d active, %d bytes waiting, webhook %v; want 0, 2, 3, 200, none", muted, open, active, waiting, webhook)
			}
			plan = plans()
			if !strings.Contains(plan, "tasks_owner_active") || strings.Contains(plan, "Seq Scan on tasks") {
				t.Errorf("the gate reads more than the owner's active tasks:\n%s", plan)
			}
		})
	}
}

// TestInboxListsReadAPage: a page of an account's inbox (its waiting tasks,
// or its history, with the shared tasks it is an approver of), and of an
// agent's list of the tasks it opened, reads about a page of tasks, however
// many the account and every other owner have, on both plans. The planner
// has the table's statistics here, as autovacuum gathers them once a table
// has had fifty or so changes. One query with "owner = ? OR id IN
// (approvers)" was read through neither index: PostgreSQL walked every
// waiting task of every owner for the waiting list, and the whole table for
// the history.
func TestInboxListsReadAPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// alice: 300 ended tasks and 3 waiting; bob: 300 waiting and 300
	// ended, one waiting task shared with alice, the newest of all.
	var tasks []store.Task
	add := func(prefix, owner string, n int) {
		for i := range n {
			k, _ := storetest.NewTask(fmt.Sprintf("%s-%03d", prefix, i), owner, "bot.near")
			k.CreatedAt = k.CreatedAt.Add(time.Duration(len(tasks)) * time.Second)
			tasks = append(tasks, k)
		}
	}
	add("a-ended", "alice.near", 300)
	add("b-ended", "bob.near", 300)
	add("b-open", "bob.near", 300)
	add("a-open", "alice.near", 3)
	add("b-shared", "bob.near", 1)
	db := planDB(t, tasks)
	execAll(t, schemaConn(t, db, nil),
		`UPDATE tasks SET state = 'cancelled', closed_at = 1 WHERE id LIKE '%-ended-%'`,
		`INSERT INTO task_approvers (task_id, account) VALUES ('b-shared-000', 'alice.near')`,
		`ANALYZE tasks`, `ANALYZE task_approvers`)
	for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
		t.Run(mode, func(t *testing.T) {
			c, plans := planConn(t, db, "SET plan_cache_mode = "+mode)
			const limit = 10
			at := func(id string) *store.Task {
				for i := range tasks {
					if tasks[i].ID == id {
						return &tasks[i]
					}
				}
				t.Fatalf("no task %s", id)
				return nil
			}
			inbox := func(waiting bool, before *store.Task) func() (string, []any) {
				return func() (string, []any) { return sqlstore.InboxTasksStatement("alice.near", waiting, before, limit) }
			}
			agent := func(owner string) func() (string, []any) {
				return func() (string, []any) {
					return sqlstore.PreparerTasksStatement(owner, tasks[0].ProjectUUID, "bot.near", "", limit)
				}
			}
			cases := []struct {
				name      string
				statement func() (string, []any)
				want      []string
			}{
				{"waiting", inbox(true, nil), []string{"b-shared-000", "a-open-002", "a-open-001", "a-open-000"}},
				{"waiting after a page", inbox(true, at("a-open-002")), []string{"a-open-001", "a-open-000"}},
				{"history", inbox(false, nil), ids("a-ended", 299, 290)},
				{"history after a page", inbox(false, at("a-ended-290")), ids("a-ended", 289, 280)},
				{"the agent's list", agent("alice.near"), append(ids("a-open", 2, 0), ids("a-ended", 299, 293)...)},
				{"the agent's list of a busy owner", agent("bob.near"), append([]string{"b-shared-000"}, ids("b-open", 299, 291)...)},
			}
			for _, tc := range cases {
				q, args := tc.statement()
				plans()
				rows, err := c.Query(ctx, q, args...)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for rows.Next() {
					v, err := rows.Values()
					if err != nil {
						t.Fatal(err)
					}
					got = append(got, v[0].(string))
				}
				if err := rows.Err(); err != nil {
					t.Fatal(err)
				}
				if strings.Join(got, " ") != strings.Join(tc.want, " ") {
					t.Errorf("%s: listed %v, want %v", tc.name, got, tc.want)
				}
				plan := plans()
				if strings.Contains(plan, "Seq Scan on tasks") {
					t.Errorf("%s reads the whole table:\n%s", tc.name, plan)
				}
				if most := mostRowsRead(plan); most > 2*limit {
					t.Errorf("%s reads %d rows for a page of %d:\n%s", tc.name, most, limit, plan)
				}
			}
		})
	}
}

// mostRowsRead is the most rows any step of an executed plan read, over all
// its loops.
func mostRowsRead(plan string) int {
	most := 0
	for _, line := range strings.Split(plan, "\n") {
		i := strings.Index(line, "(actual ")
		if i < 0 {
			continue
		}
		var rows, loops int
		if j := strings.Index(line[i:], " rows="); j >= 0 {
			fmt.Sscanf(line[i+j+len(" rows="):], "%d loops=%d", &rows, &loops)
		}
		most = max(most, rows*loops)
		for _, removed := range []string{"Rows Removed by Filter: ", "Rows Removed by Join Filter: "} {
			if j := strings.Index(line, removed); j >= 0 {
				var n int
				fmt.Sscanf(line[j+len(removed):], "%d", &n)
				most = max(most, n)
			}
		}
	}
	return most
}

// ids names prefix's tasks from the number first down to last.
func ids(prefix string, first, last int) []string {
	var out []string
	for i := first; i >= last; i-- {
		out = append(out, fmt.Sprintf("%s-%03d", prefix, i))
	}
	return out
}

// TestTaskRowsStayWhole: a guessing game's turn (1.7 KiB sealed, 1.4 KiB
// of content, both random, as ciphertext is) is kept in the task's own row:
// nothing goes to the table PostgreSQL moves large values out to, which
// each open and each close would otherwise write to and delete from. A
// value larger than a page still goes there, as it is, uncompressed.
func TestTaskRowsStayWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.FreshPostgres(t)
	c := schemaConn(t, db, nil)
	outOfLine := func() (rows int64) {
		t.Helper()
		var toast string
		if err := c.QueryRow(ctx, "SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'tasks'::regclass").Scan(&toast); err != nil {
			t.Fatal(err)
		}
		if err := c.QueryRow(ctx, "SELECT COUNT(*) FROM "+toast).Scan(&rows); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	insertSized := func(id string, sealed, content int) {
		t.Helper()
		k, ct := storetest.NewTask(id, "alice.near", "bot.near")
		ct.Sealed, ct.Content = make([]byte, sealed), make([]byte, content)
		_, _ = rand.Read(ct.Sealed)
		_, _ = rand.Read(ct.Content)
		if err := db.Tx(ctx, func(tx store.Tx) error { return tx.InsertTask(ctx, k, ct) }); err != nil {
			t.Fatal(err)
		}
	}
	insertSized("turn-1", 1680, 1440)
	if n := outOfLine(); n != 0 {
		t.Fatalf("a turn's row put %d chunks out of line", n)
	}
	insertSized("large-1", 1680, 64<<10)
	var stored, length int64
	if err := c.QueryRow(ctx, "SELECT pg_column_size(content), octet_length(content) FROM tasks WHERE id = 'large-1'").Scan(&stored, &length); err != nil {
		t.Fatal(err)
	}
	if n := outOfLine(); n == 0 || stored < length {
		t.Errorf("64 KiB of content: %d chunks out of line, stored in %d bytes for %d", n, stored, length)
	}
}
