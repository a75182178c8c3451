-- An owner's lock is no longer a row: on PostgreSQL it is a transaction
-- advisory lock, which writes nothing; on SQLite a writing transaction
-- holds the whole database already.
DROP TABLE owner_locks;
