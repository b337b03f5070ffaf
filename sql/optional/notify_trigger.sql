-- Poll mode wake-up (walbox migrate --notify-trigger): one NOTIFY per INSERT statement on the outbox. Opt-in:
-- NOTIFY takes a database-wide lock at commit, which serialises committing transactions that notified.
CREATE OR REPLACE FUNCTION {{schema}}.{{notify_function}}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify({{literal:channel}}, '');
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS walbox_notify ON {{schema}}.{{table}};
CREATE TRIGGER walbox_notify AFTER INSERT ON {{schema}}.{{table}}
    FOR EACH STATEMENT EXECUTE FUNCTION {{schema}}.{{notify_function}}();
