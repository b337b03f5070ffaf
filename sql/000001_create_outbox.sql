-- The outbox table: the design article's columns plus what walbox needs. Also adopts an existing table of the
-- article's shape: missing columns are added. Adding the identity column to a table that has rows rewrites it
-- (an ACCESS EXCLUSIVE lock for the length of the rewrite); existing rows get seq values in physical order.
CREATE TABLE IF NOT EXISTS {{schema}}.{{table}} (
    {{id}}             uuid         PRIMARY KEY DEFAULT gen_random_uuid(),
    {{aggregate_type}} varchar(100) NOT NULL,
    {{aggregate_id}}   varchar(100) NOT NULL,
    {{event_type}}     varchar(100) NOT NULL,
    {{payload}}        jsonb        NOT NULL,
    attempts       int          NOT NULL DEFAULT 0,
    created_at     timestamptz  NOT NULL DEFAULT now(),
    processed_at   timestamptz
);

ALTER TABLE {{schema}}.{{table}}
    ADD COLUMN IF NOT EXISTS headers          jsonb,
    ADD COLUMN IF NOT EXISTS retry_after      timestamptz,
    ADD COLUMN IF NOT EXISTS last_error       text,
    ADD COLUMN IF NOT EXISTS dead_lettered_at timestamptz,
    -- Insert order: poll mode and catch-up order by seq, never by created_at (transaction start time).
    ADD COLUMN IF NOT EXISTS seq              bigint GENERATED ALWAYS AS IDENTITY;

-- Only pending rows are indexed, so polling stays fast however many rows were published.
CREATE INDEX IF NOT EXISTS {{pending_index}}
    ON {{schema}}.{{table}} (seq)
    WHERE processed_at IS NULL AND dead_lettered_at IS NULL;
