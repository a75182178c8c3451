-- M-of-N approvers (SPEC §13 `approvers`, wave 3). A confirm task of a
-- project whose policy names approvers is shared: `threshold` distinct
-- accounts among its owner and the approvers listed for it must approve it
-- (0: its owner alone approves, as before). Who rejected a task is named.
ALTER TABLE tasks ADD COLUMN threshold BIGINT NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN rejected_by TEXT NOT NULL DEFAULT '';

-- The accounts besides the owner listed as approvers of a shared task when
-- it opened (an approver the owner removes since is taken off its waiting
-- tasks). An approver's inbox lists its tasks through the index on account.
CREATE TABLE task_approvers (
    task_id TEXT NOT NULL,
    account TEXT NOT NULL,
    PRIMARY KEY (task_id, account)
);
CREATE INDEX task_approvers_account ON task_approvers (account, task_id);

-- Each account's approval of a shared task, once: when the door accepted it
-- and the signed approval as it checked it (the signature, its key, nonce
-- and time, the hashes it names; nothing the task shows), which the answer
-- run checks again. The signed approval goes when the task ends; who
-- approved when stays with the task's outcome until it is purged.
CREATE TABLE task_approvals (
    task_id  TEXT NOT NULL,
    account  TEXT NOT NULL,
    at       BIGINT NOT NULL,
    approval BYTEA,
    PRIMARY KEY (task_id, account)
);

-- A webhook event of a shared task is written for the owner's webhook and
-- for each approver's: receiver names the approver ('' for the owner).
ALTER TABLE webhook_events ADD COLUMN receiver TEXT NOT NULL DEFAULT '';
