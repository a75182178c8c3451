-- The policies a project's policy only widens: the SHA-256 hashes (lowercase
-- hex, separated by spaces, newest first) of the policies it was made from
-- by "Always allow this" (SPEC §13), each adding one rule that allows and
-- changing nothing else the policy decides. A task opened under one of them
-- and approved is still carried out, not void. Any other change of the
-- policy empties the list.
ALTER TABLE projects ADD COLUMN policy_widens TEXT NOT NULL DEFAULT '';
