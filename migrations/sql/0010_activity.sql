-- The owner's history (GET /inbox/activity): one entry per write carried
-- out, asked or not, and per task that ended. In clear only ids, names,
-- states and times; the title, summary and result are sealed under the
-- entry's key (derived from the master key id beside it), which is wrapped
-- to each of the owner's devices. A task's entry is made when the task
-- opens, under the task's id, and listed once the task has ended; a write
-- carried out at once has its run's id.

CREATE TABLE activity (
    id             TEXT PRIMARY KEY,
    owner          TEXT NOT NULL,
    project        TEXT NOT NULL,
    project_uuid   TEXT NOT NULL,
    connector      TEXT NOT NULL,
    operation      TEXT NOT NULL,
    preparer       TEXT NOT NULL,
    via            TEXT NOT NULL, -- task | direct
    state          TEXT NOT NULL,
    failure_reason TEXT NOT NULL,
    at             BIGINT NOT NULL, -- when it ended (a task's entry: when it opened, until it ends)
    key_id         BIGINT NOT NULL,
    sealed         BYTEA NOT NULL
);
CREATE INDEX activity_owner_at ON activity (owner, at, id);
CREATE INDEX activity_at ON activity (at);

CREATE TABLE activity_copies (
    entry_id  TEXT NOT NULL,
    device_id TEXT NOT NULL,
    blob      BYTEA NOT NULL,
    PRIMARY KEY (entry_id, device_id)
);
CREATE INDEX activity_copies_device ON activity_copies (device_id);
