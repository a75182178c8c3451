-- Receipt hashes are keyed (SPEC §11, amended). A run's own receipt names
-- HMACs under a random key, kept sealed under the master key in its row (with
-- the key id); an idempotent call's body hash is an HMAC under a key derived
-- from the master key, whose id is kept beside it. Runs are purged with the
-- task outcomes they belong to, so tasks are found by their run.
ALTER TABLE runs ADD COLUMN receipt_key_id BIGINT NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN receipt_key BYTEA;
ALTER TABLE idempotency ADD COLUMN body_key_id BIGINT NOT NULL DEFAULT 0;
CREATE INDEX runs_started ON runs (started_at);
CREATE INDEX tasks_run ON tasks (run);

-- The bare SHA-256 hashes written before are removed, not kept until they
-- age out: run hashes and receipts are cleared (a task still open shows no
-- proof of origin and is not approved by a device that checks it), and an
-- idempotent call made before keeps its sealed answer but no body hash (a
-- retry with its key is refused, never run again).
UPDATE runs SET input_sha256 = '', output_sha256 = '', receipt = '';
UPDATE tasks SET receipt = '';
UPDATE idempotency SET body_sha256 = '';
