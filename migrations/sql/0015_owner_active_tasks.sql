-- An owner's load (its open tasks, the preparer's open and approved ones,
-- the content waiting) is read under the owner's lock at every task opened.
-- Through (owner, state, created_at) the planner, without statistics, as on
-- a new database, matched the owner alone and read every task the owner
-- ever had, so each open grew with the owner's history. This index holds
-- only the tasks the load counts, with every column it reads.
CREATE INDEX tasks_owner_active ON tasks (owner, state, preparer, content_size)
	WHERE state IN ('open', 'approved');
