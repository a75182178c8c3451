-- The owner's mutes: agents or projects whose tasks are refused at opening.

CREATE TABLE mutes (
    owner      TEXT NOT NULL,
    subject_is TEXT NOT NULL, -- agent | project
    subject    TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (owner, subject_is, subject)
);
