-- Answer runs: when a task last changed state (for the 30-minute rule),
-- each task's signed receipt, which process runs an answer, and the
-- processes' heartbeats (so a run whose process died is never replayed).

ALTER TABLE tasks ADD COLUMN state_at BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN receipt TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN runner TEXT NOT NULL DEFAULT '';
CREATE INDEX tasks_state_at ON tasks (state, state_at);

CREATE TABLE runners (
    id      TEXT PRIMARY KEY,
    seen_at BIGINT NOT NULL
);
