-- A project's version moves with every change of the project: its
-- connector, policy, grants or sealed credentials. An agent's call let in
-- on an admission read before (the key, the agent, the project) checks in
-- its own transaction that the version it read is still the project's;
-- updated_at counts whole seconds and cannot tell two changes apart.
ALTER TABLE projects ADD COLUMN version BIGINT NOT NULL DEFAULT 1;
