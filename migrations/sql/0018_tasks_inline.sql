-- A task's content and its sealed copy are ciphertext: they never
-- compress, and together (about 2.5 KiB for a small task) they made a
-- task's row larger than the 2 KiB at which PostgreSQL moves a row's
-- largest values out to a table of their own. Every task opened then wrote
-- two more rows and two index entries there, after trying to compress what
-- does not compress, and every task closed deleted them again. A task's row
-- now stays whole in its page up to a page's size; a value that is larger
-- still goes out of line, without the attempt to compress it. Only the
-- catalog changes: rows written before keep their values where they are.
-- On PostgreSQL alone:
ALTER TABLE tasks SET (toast_tuple_target = 8160);
ALTER TABLE tasks ALTER COLUMN content SET STORAGE EXTERNAL;
ALTER TABLE tasks ALTER COLUMN sealed SET STORAGE EXTERNAL;
