-- Labels: what a person said about a run (issue 50). `tracereplay label RUN --bad|--good` and
-- the run page of the UI add one row each; a run may have several (people disagree, or change
-- their minds) and its latest (created_at, then label_id) is the run's label: the view
-- latest_labels holds it, one row per labelled run. `expected` is the corrected answer, which
-- promoting the run takes as the case's expected output (and `note` as its description).
CREATE TABLE labels (
    label_id    VARCHAR PRIMARY KEY,
    run_id      VARCHAR NOT NULL,
    verdict     VARCHAR NOT NULL CHECK (verdict IN ('good', 'bad')),
    note        VARCHAR,
    expected    VARCHAR,
    author      VARCHAR,
    created_at  TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);

CREATE VIEW latest_labels AS
SELECT label_id, run_id, verdict, note, expected, author, created_at
FROM (
    SELECT *, row_number() OVER (
        PARTITION BY run_id ORDER BY created_at DESC, label_id DESC) AS nth
    FROM labels
) AS l
WHERE nth = 1;
