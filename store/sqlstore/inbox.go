package sqlstore

import (
	"context"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"countersign"
	"countersign/store"
)

func (t *tx) OwnerTasks(ctx context.Context, owner string, waiting bool, before *store.Task, limit int) ([]store.Task, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("store: a list of tasks needs a positive limit, not %d", limit)
	}
	page, args := taskPage(waiting, before)
	return t.tasks(ctx, "SELECT "+taskColumns+" FROM tasks WHERE owner = ?"+page+newestFirst,
		append(append([]any{owner}, args...), limit)...)
}

// newestFirst orders a list of tasks as it is shown, and cuts it at a page.
const newestFirst = " ORDER BY created_at DESC, id DESC LIMIT ?"

// taskPage is what a list of tasks keeps: the waiting (open) tasks or the
// others, and, after a page, the tasks older than its last (created_at,
// id). With the owner first, (owner, created_at, id) reads the history from
// the page's start on, newest first, as far as one page goes; the waiting
// tasks, a few, are the owner's active ones (tasks_owner_active).
func taskPage(waiting bool, before *store.Task) (string, []any) {
	q := " AND state <> " + sqlState(countersign.StateOpen)
	if waiting {
		q = " AND state = " + sqlState(countersign.StateOpen)
	}
	if before == nil {
		return q, nil
	}
	return q + " AND (created_at, id) < (?, ?)", []any{before.CreatedAt.Unix(), before.ID}
}

func (t *tx) DeviceCopies(ctx context.Context, id string) ([]string, error) {
	r, err := t.q.query(ctx, "SELECT device_id FROM device_copies WHERE task_id = ? ORDER BY device_id", id)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []string
	for r.Next() {
		var d string
		if err := r.Scan(&d); err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, r.Err()
}

// answerJobOpts: a failed attempt (the store down mid-run) is tried again;
// the task row decides whether the run may start at all.
func answerJobOpts() *river.InsertOpts { return &river.InsertOpts{MaxAttempts: 10} }

// EnqueueAnswer writes the job to the queue in this transaction, or, where
// this process runs answers itself, keeps it to hand over when the
// transaction commits (HandOff).
func (t *tx) EnqueueAnswer(ctx context.Context, job store.AnswerJob) error {
	if t.db.handoff.Load() != nil {
		t.handoffs = append(t.handoffs, job)
		return nil
	}
	// The queue writes on the driver's transaction: what is pending first.
	if err := t.flush(ctx); err != nil {
		return err
	}
	_, err := t.db.e.insertJobs(ctx, t, []river.InsertManyParams{{Args: job, InsertOpts: answerJobOpts()}})
	return err
}

func (t *tx) StrandedApprovals(ctx context.Context, before time.Time, limit int) ([]store.AnswerJob, error) {
	taskOf := t.db.e.jsonText("j.args", "task_id")
	r, err := t.q.query(ctx, `SELECT id, answer_run FROM tasks WHERE state = `+sqlState(countersign.StateApproved)+`
		AND state_at <= ? AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.kind = 'answer_run'
			AND CAST(j.state AS TEXT) IN ('available', 'scheduled', 'retryable', 'pending') AND `+taskOf+` = tasks.id)
		ORDER BY state_at, id LIMIT ?`, before.Unix(), limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []store.AnswerJob
	for r.Next() {
		var j store.AnswerJob
		if err := r.Scan(&j.TaskID, &j.Run); err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, r.Err()
}

func (t *tx) Gauges(ctx context.Context) (store.Gauges, error) {
	g := store.Gauges{Tasks: map[countersign.State]int{}, Queued: map[string]int{}}
	r, err := t.q.query(ctx, "SELECT state, count(*) FROM tasks GROUP BY state")
	if err != nil {
		return g, err
	}
	for r.Next() {
		var st string
		var n int
		if err := r.Scan(&st, &n); err != nil {
			r.Close()
			return g, classify(err)
		}
		g.Tasks[countersign.State(st)] = n
	}
	r.Close()
	if err := r.Err(); err != nil {
		return g, classify(err)
	}
	r, err = t.q.query(ctx, `SELECT kind, count(*) FROM river_job
		WHERE CAST(state AS TEXT) IN ('available', 'scheduled', 'retryable', 'pending') GROUP BY kind`)
	if err != nil {
		return g, err
	}
	defer r.Close()
	for r.Next() {
		var kind string
		var n int
		if err := r.Scan(&kind, &n); err != nil {
			return g, classify(err)
		}
		g.Queued[kind] = n
	}
	return g, classify(r.Err())
}

func (t *tx) PutMute(ctx context.Context, m store.Mute) error {
	_, err := t.q.exec(ctx, `INSERT INTO mutes (owner, subject_is, subject, created_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (owner, subject_is, subject) DO NOTHING`, m.Owner, m.SubjectIs, m.Subject, m.CreatedAt.Unix())
	return err
}

func (t *tx) DeleteMute(ctx context.Context, owner, subjectIs, subject string) (bool, error) {
	n, err := t.q.exec(ctx, "DELETE FROM mutes WHERE owner = ? AND subject_is = ? AND subject = ?", owner, subjectIs, subject)
	return n == 1, err
}

func (t *tx) Mutes(ctx context.Context, owner string) ([]store.Mute, error) {
	r, err := t.q.query(ctx, "SELECT owner, subject_is, subject, created_at FROM mutes WHERE owner = ? ORDER BY subject_is, subject", owner)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var out []store.Mute
	for r.Next() {
		var m store.Mute
		var at int64
		if err := r.Scan(&m.Owner, &m.SubjectIs, &m.Subject, &at); err != nil {
			return nil, err
		}
		m.CreatedAt = unix(at)
		out = append(out, m)
	}
	return out, r.Err()
}

const mutedQuery = `SELECT COUNT(*) FROM mutes WHERE owner = ? AND
	(subject_is = 'agent' AND subject = ? OR subject_is = 'project' AND subject = ?)`

func (t *tx) Muted(ctx context.Context, owner, agent, project string) (bool, error) {
	var n int
	err := t.q.queryRow(ctx, mutedQuery, owner, agent, project).Scan(&n)
	return n > 0, err
}
