-- Tasks and what they show. Only metadata is in clear; everything a task
-- shows is ciphertext (sealed copy, content, files, device copies).

CREATE TABLE owner_locks (
    owner TEXT PRIMARY KEY
);

CREATE TABLE tasks (
    id             TEXT PRIMARY KEY,
    owner          TEXT NOT NULL,
    preparer       TEXT NOT NULL,
    project        TEXT NOT NULL,
    project_uuid   TEXT NOT NULL,
    connector      TEXT NOT NULL,
    kind           TEXT NOT NULL,
    state          TEXT NOT NULL,
    thread         TEXT NOT NULL,
    run            TEXT NOT NULL,
    operation      TEXT NOT NULL,
    supplies       TEXT NOT NULL,
    reply_pubkey   TEXT NOT NULL,
    task_hash      TEXT NOT NULL,
    key_id         BIGINT NOT NULL,
    content_size   BIGINT NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    closed_at      BIGINT,
    outcome_class  TEXT,
    failure_reason TEXT,
    answer_run     TEXT,
    next_task_id   TEXT,
    notice_task_id TEXT,
    forgotten      BIGINT NOT NULL DEFAULT 0,
    sealed         BYTEA,
    content        BYTEA,
    approval       BYTEA,
    result         BYTEA,
    result_key_id  BIGINT,
    reason         BYTEA
);
CREATE INDEX tasks_owner_state ON tasks (owner, state, created_at);
CREATE INDEX tasks_preparer ON tasks (preparer, owner, state);
CREATE INDEX tasks_state_expires ON tasks (state, expires_at);
CREATE INDEX tasks_closed ON tasks (closed_at);

CREATE TABLE task_files (
    task_id TEXT NOT NULL,
    n       BIGINT NOT NULL,
    size    BIGINT NOT NULL,
    blob    BYTEA NOT NULL,
    PRIMARY KEY (task_id, n)
);

CREATE TABLE device_copies (
    task_id   TEXT NOT NULL,
    device_id TEXT NOT NULL,
    blob      BYTEA NOT NULL,
    PRIMARY KEY (task_id, device_id)
);
CREATE INDEX device_copies_device ON device_copies (device_id);

CREATE TABLE task_events (
    id         BIGSERIAL PRIMARY KEY,
    task_id    TEXT NOT NULL,
    owner      TEXT NOT NULL,
    from_state TEXT NOT NULL,
    to_state   TEXT NOT NULL,
    actor      TEXT NOT NULL,
    run        TEXT NOT NULL,
    at         BIGINT NOT NULL
);
CREATE INDEX task_events_task ON task_events (task_id, id);
