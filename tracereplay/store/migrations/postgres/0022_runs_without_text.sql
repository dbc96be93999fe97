-- After an ingest, the note about runs recorded without content (cli/content_notes.py) looks
-- for the live runs converted since the ingest began that hold neither a query nor a response
-- (store/runs.py: live_runs_without_text). No index served it, so every ingest read every row
-- of `runs`, whose queries, responses and contexts make them wide: 485 MB at 300,000 runs, and
-- growing with the store. This index holds only such runs, few where the instrumentation
-- records content and none in the rest: writing any other run costs it nothing.
CREATE INDEX runs_live_without_text ON runs (converted_at)
    WHERE kind = 'live' AND coalesce(query, '') = '' AND coalesce(response, '') = '';
