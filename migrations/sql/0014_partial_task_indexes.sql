-- A task's moves find it by its id. The indexes that began with the state
-- ((state, expires_at), (state, state_at)) let the planner, on a generic
-- plan where the state is a parameter, find the task among every task in
-- its state instead, and every move wrote an entry to each of them. The
-- sweeps' indexes now hold only the tasks each sweep looks for: open tasks
-- by their deadline, approved and answering tasks by when they got there,
-- ended tasks by when they ended.
DROP INDEX tasks_state_expires;
DROP INDEX tasks_state_at;
DROP INDEX tasks_closed;
CREATE INDEX tasks_open_expires ON tasks (expires_at) WHERE state = 'open';
CREATE INDEX tasks_approved_at ON tasks (state_at) WHERE state = 'approved';
CREATE INDEX tasks_answering_at ON tasks (state_at) WHERE state = 'answering';
CREATE INDEX tasks_closed ON tasks (closed_at) WHERE closed_at IS NOT NULL;
