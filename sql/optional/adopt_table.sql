-- Adopting an outbox table walbox did not create (Debezium's, say): the bookkeeping columns that 000001's CREATE
-- TABLE would have made, added before 000001 runs. A constant default and nullable columns: no table rewrite
-- (existing rows get created_at = the time of this statement). Nothing happens when the table does not exist yet
-- or has them already; the user's own columns are never renamed or changed.
ALTER TABLE IF EXISTS {{schema}}.{{table}}
    ADD COLUMN IF NOT EXISTS attempts     int         NOT NULL DEFAULT 0,
    ADD COLUMN IF NOT EXISTS created_at   timestamptz NOT NULL DEFAULT now(),
    ADD COLUMN IF NOT EXISTS processed_at timestamptz;
