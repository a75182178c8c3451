-- Owners' devices (one signed-in session each) and spent signature nonces.

CREATE TABLE devices (
    id             TEXT PRIMARY KEY,
    account        TEXT NOT NULL,
    device_pubkey  TEXT NOT NULL,
    signer_pubkey  TEXT NOT NULL,
    -- SHA-256 of the session token; the token itself is never stored.
    token_hash     BYTEA NOT NULL UNIQUE,
    -- The signed sign-in statement (sentence, nonce, signature), so the
    -- enclave side can check it before it wraps a content key to the device.
    statement      TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    valid_until    BIGINT NOT NULL,
    ended_at       BIGINT,
    end_reason     TEXT,
    key_checked_at BIGINT NOT NULL,
    key_gone       BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX devices_account ON devices (account, created_at);

CREATE TABLE nonces (
    account    TEXT NOT NULL,
    nonce      BYTEA NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (account, nonce)
);
CREATE INDEX nonces_expires ON nonces (expires_at);
