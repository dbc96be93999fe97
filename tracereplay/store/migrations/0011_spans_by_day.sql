-- PostgreSQL's 0011 partitions its spans table by day (migrations/postgres/0011_spans_by_day.sql).
-- A DuckDB file needs nothing: its spans are appended in time order and each row group's
-- min/max start time already lets a time condition skip the rest (db.TimeWindow), and prune
-- deletes rows and then compacts the file. This twin keeps both engines' versions in step.
SELECT 1;
