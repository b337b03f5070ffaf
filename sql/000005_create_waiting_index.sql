-- Pending rows waiting for a retry (a failed publish in poll mode) are few: this index lets every poll find the
-- aggregates they hold back without scanning the backlog, so that those aggregates' rows are left out of the
-- candidate window instead of filling it (and starving every other aggregate).
CREATE INDEX IF NOT EXISTS {{waiting_index}}
    ON {{schema}}.{{table}} ({{aggregate_type}}, {{aggregate_id}})
    WHERE retry_after IS NOT NULL AND processed_at IS NULL AND dead_lettered_at IS NULL;
