-- An owner's lists, newest first, a page at a time, each read in the order
-- it is shown, so that a page reads a page of tasks, however many the owner
-- has had: the waiting list through the owner's active tasks (which the
-- owner's load reads too, every column it needs in the index), the history
-- through an index of the rest. (owner, state, created_at) held each state
-- apart, so a history of every state was sorted whole, and without
-- statistics the planner matched the owner alone there.
DROP INDEX tasks_owner_state;
DROP INDEX tasks_owner_active;
CREATE INDEX tasks_owner_active ON tasks (owner, state, created_at, id, preparer, content_size)
	WHERE state IN ('open', 'approved');
CREATE INDEX tasks_owner_history ON tasks (owner, created_at, id) WHERE state <> 'open';
-- An agent's list of the tasks it opened for an owner in a project, newest
-- first, the same way.
DROP INDEX tasks_preparer;
CREATE INDEX tasks_preparer ON tasks (owner, preparer, project_uuid, created_at, id);
