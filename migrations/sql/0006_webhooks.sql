-- Webhooks: each owner's one URL (sealed with its secret: a URL's path may
-- itself be a secret), the outbox of task events written in the transaction
-- of the state change, and every delivery attempt, for the owner's log.

CREATE TABLE webhooks (
    owner      TEXT PRIMARY KEY,
    id         TEXT NOT NULL, -- new on every PUT: pending deliveries to an older id stop
    set_at     BIGINT NOT NULL,
    set_by_key TEXT NOT NULL,
    key_id     BIGINT NOT NULL,
    sealed     BYTEA NOT NULL -- {url, secret} sealed under the master key
);

CREATE TABLE webhook_events (
    id             TEXT PRIMARY KEY,
    owner          TEXT NOT NULL,
    webhook_id     TEXT NOT NULL,
    type           TEXT NOT NULL,
    task_id        TEXT NOT NULL,
    preparer       TEXT NOT NULL,
    project        TEXT NOT NULL,
    kind           TEXT NOT NULL,
    run            TEXT NOT NULL,
    failure_reason TEXT NOT NULL,
    at             BIGINT NOT NULL
);
CREATE INDEX webhook_events_at ON webhook_events (at);

CREATE TABLE webhook_attempts (
    id          BIGSERIAL PRIMARY KEY,
    owner       TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    type        TEXT NOT NULL,
    task_id     TEXT NOT NULL,
    attempt     BIGINT NOT NULL,
    status_code BIGINT NOT NULL,
    error       TEXT NOT NULL,
    at          BIGINT NOT NULL
);
CREATE INDEX webhook_attempts_owner ON webhook_attempts (owner, id);
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id);
