-- What a connector paid out, per project, for bounds over a rolling window
-- (Mercury's max_spend_usd_month). One row per payment, named by the key the
-- payment carries upstream, so a retried payment counts once. Amounts are
-- integer cents.
CREATE TABLE spend (
    owner        TEXT NOT NULL,
    project_uuid TEXT NOT NULL,
    key          TEXT NOT NULL,
    cents        BIGINT NOT NULL,
    at           BIGINT NOT NULL,
    PRIMARY KEY (project_uuid, key)
);
CREATE INDEX spend_project_at ON spend (project_uuid, at);
