-- The order devices signed in, within one account: created_at is in whole
-- seconds, so devices that sign in within one second are told apart by seq
-- (each sign-in takes the account's next number, under the owner's lock).
ALTER TABLE devices ADD COLUMN seq BIGINT NOT NULL DEFAULT 0;
UPDATE devices SET seq = (SELECT COUNT(*) FROM devices AS earlier
    WHERE earlier.account = devices.account
    AND (earlier.created_at < devices.created_at
        OR earlier.created_at = devices.created_at AND earlier.id <= devices.id));
DROP INDEX devices_account;
CREATE INDEX devices_account ON devices (account, created_at, seq);
