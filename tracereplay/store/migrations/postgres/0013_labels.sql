-- Labels: what a person said about a run (migrations/0013_labels.sql says more); the same
-- table and view in PostgreSQL's dialect, with the run's labels found by its id.
CREATE TABLE labels(label_id text PRIMARY KEY, run_id text NOT NULL, verdict text NOT NULL CHECK (verdict IN ('good', 'bad')), note text, expected text, author text, created_at timestamptz DEFAULT current_timestamp NOT NULL);
CREATE INDEX labels_run ON labels (run_id, created_at);
CREATE VIEW latest_labels AS SELECT label_id, run_id, verdict, note, expected, author, created_at FROM (SELECT *, row_number() OVER (PARTITION BY run_id ORDER BY created_at DESC, label_id DESC) AS nth FROM labels) AS l WHERE nth = 1;
