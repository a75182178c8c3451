-- Agents and their money, owners' projects, runs, idempotent calls and daily
-- write counts.

CREATE TABLE agents (
    account    TEXT PRIMARY KEY,
    -- micro-USD; charges are conditional updates, and the check is a
    -- second guard against a balance below zero.
    balance    BIGINT NOT NULL DEFAULT 0 CHECK (balance >= 0),
    created_at BIGINT NOT NULL
);

CREATE TABLE agent_keys (
    -- SHA-256 of the agent key; the key itself is never stored.
    key_hash   BYTEA PRIMARY KEY,
    account    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    revoked_at BIGINT
);
CREATE INDEX agent_keys_account ON agent_keys (account);

CREATE TABLE ledger (
    id      BIGSERIAL PRIMARY KEY,
    account TEXT NOT NULL,
    amount  BIGINT NOT NULL, -- micro-USD: credits positive, charges negative
    run     TEXT NOT NULL,
    note    TEXT NOT NULL,
    at      BIGINT NOT NULL
);
CREATE INDEX ledger_account ON ledger (account, id);

CREATE TABLE projects (
    owner        TEXT NOT NULL,
    name         TEXT NOT NULL,
    project_uuid TEXT NOT NULL UNIQUE,
    connector    TEXT NOT NULL,
    -- The policy's bytes as stored (its hash is what tasks name).
    policy       BYTEA NOT NULL,
    -- Credentials sealed under the master key, with the key id.
    creds_key_id BIGINT,
    creds        BYTEA,
    created_at   BIGINT NOT NULL,
    updated_at   BIGINT NOT NULL,
    PRIMARY KEY (owner, name)
);

CREATE TABLE project_agents (
    project_uuid TEXT NOT NULL,
    agent        TEXT NOT NULL,
    PRIMARY KEY (project_uuid, agent)
);

CREATE TABLE runs (
    id               TEXT PRIMARY KEY,
    agent            TEXT NOT NULL,
    owner            TEXT NOT NULL,
    project_uuid     TEXT NOT NULL,
    operation        TEXT NOT NULL,
    price            BIGINT NOT NULL,
    compute_limit_ms BIGINT NOT NULL,
    task_id          TEXT NOT NULL, -- the task an answer run answers, else ''
    input_sha256     TEXT NOT NULL,
    output_sha256    TEXT NOT NULL DEFAULT '',
    receipt          TEXT NOT NULL DEFAULT '',
    started_at       BIGINT NOT NULL,
    finished_at      BIGINT
);
CREATE INDEX runs_task ON runs (task_id);

CREATE TABLE idempotency (
    agent       TEXT NOT NULL,
    owner       TEXT NOT NULL,
    project     TEXT NOT NULL,
    key         TEXT NOT NULL,
    body_sha256 TEXT NOT NULL,
    -- The first answer, sealed under the master key (it may hold what a
    -- read returned); NULL while the first call runs.
    answer_key_id BIGINT,
    answer      BYTEA,
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (agent, owner, project, key)
);
CREATE INDEX idempotency_created ON idempotency (created_at);

CREATE TABLE daily_counts (
    owner        TEXT NOT NULL,
    project_uuid TEXT NOT NULL,
    agent        TEXT NOT NULL,
    day          TEXT NOT NULL,
    kind         TEXT NOT NULL,
    count        BIGINT NOT NULL,
    PRIMARY KEY (owner, project_uuid, agent, day, kind)
);
