-- Consumer side (walbox migrate --consumer): one row per event a consumer has handled, written in the same
-- transaction as the handler's effects, so a redelivered event is recognised and skipped.
CREATE TABLE IF NOT EXISTS {{schema}}.processed_events (
    consumer     text        NOT NULL,
    event_id     uuid        NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, event_id)
);
