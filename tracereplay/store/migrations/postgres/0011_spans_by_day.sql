-- spans range-partitioned by start time: one partition per UTC day (spans_pYYYYMMDD), so
-- `prune` drops whole old days instead of deleting their rows one by one, and the store's
-- lookups within a time window (a batch's traces, a late span's trace) read only the days in
-- it. The partition key is start_time_unix_nano, the column those lookups filter on. A
-- partitioned table's key must hold its partition key: a span is (trace_id, span_id,
-- start_time_unix_nano), and a re-sent span (an exporter's retry) has its original's start
-- time, so it still conflicts and is stored once. Writers create the day's partition before
-- they insert into it (engines/pg_partitions.py). Rows of a store made with 0010 move here.
ALTER TABLE spans RENAME TO spans_0010;
ALTER INDEX spans_pkey RENAME TO spans_0010_pkey;
ALTER INDEX spans_start RENAME TO spans_0010_start;
CREATE TABLE spans(trace_id text NOT NULL, span_id text NOT NULL, parent_span_id text, "name" text, kind text, start_time timestamptz, end_time timestamptz, duration_ms double precision, status_code text, status_message text, service_name text, scope_name text, attributes json, events json, links json, "resource" json, start_time_unix_nano bigint NOT NULL, end_time_unix_nano bigint, ingested_at timestamptz DEFAULT current_timestamp, PRIMARY KEY (trace_id, span_id, start_time_unix_nano)) PARTITION BY RANGE (start_time_unix_nano);
CREATE INDEX spans_start ON spans (start_time_unix_nano);
UPDATE spans_0010 SET start_time_unix_nano = coalesce(
    (extract(epoch FROM start_time) * 1000000)::bigint * 1000, 0)
WHERE start_time_unix_nano IS NULL;
DO $$
DECLARE
    day bigint;
BEGIN
    FOR day IN SELECT DISTINCT floor(start_time_unix_nano::numeric / 86400000000000)::bigint
               FROM spans_0010 LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF spans FOR VALUES FROM (%s) TO (%s)',
                       'spans_p' || to_char(to_timestamp(day * 86400) AT TIME ZONE 'UTC', 'YYYYMMDD'),
                       day * 86400000000000, (day + 1) * 86400000000000);
    END LOOP;
END $$;
INSERT INTO spans SELECT * FROM spans_0010 ORDER BY start_time_unix_nano;
DROP TABLE spans_0010;
-- `runs` lists the newest runs first (ORDER BY started_at DESC NULLS LAST, run_id LIMIT n): an
-- index in that order gives them without sorting every run (runs_started, ascending, reads
-- backwards as DESC NULLS FIRST, which is not the same order).
CREATE INDEX runs_newest ON runs (started_at DESC NULLS LAST, run_id);
