-- Web Push (SPEC §10, wave 3). A device's one subscription lives on its row,
-- sealed under the master key with the key id beside it (the endpoint is a
-- capability and the keys are secrets): it ends with the device, and is
-- deleted when the push service says it is over.
ALTER TABLE devices ADD COLUMN push_key_id BIGINT;
ALTER TABLE devices ADD COLUMN push_sealed BYTEA;

-- The service's VAPID key pair, generated once: its private key sealed under
-- the master key (sealed again under the current key by rotation), its
-- public key in clear.
CREATE TABLE push_keys (
    id         TEXT PRIMARY KEY, -- 'vapid'
    public_key TEXT NOT NULL,
    key_id     BIGINT NOT NULL,
    sealed     BYTEA NOT NULL,
    created_at BIGINT NOT NULL
);

-- The outbox of pushes: one row per task and device with a subscription,
-- written in the task's transaction with its job; ids only. A row goes when
-- its push is delivered, given up or no longer wanted.
CREATE TABLE push_deliveries (
    task_id    TEXT NOT NULL,
    device_id  TEXT NOT NULL,
    attempts   BIGINT NOT NULL DEFAULT 0,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (task_id, device_id)
);
CREATE INDEX push_deliveries_created ON push_deliveries (created_at);
