-- Dead letters are counted often (metrics, `walbox status`) and are few: a small partial index keeps the count
-- from scanning the whole table.
CREATE INDEX IF NOT EXISTS {{dead_letters_index}}
    ON {{schema}}.{{table}} (seq)
    WHERE dead_lettered_at IS NOT NULL AND processed_at IS NULL;
