-- What WAL mode knows about its slot, kept outside the slot itself: whether the rows that were pending when
-- the slot was created have been caught up, and the last position walbox confirmed (to notice a slot that
-- was dropped, recreated or advanced by someone else). It never sets the start position: the slot does.
CREATE TABLE IF NOT EXISTS {{schema}}.walbox_state (
    slot              text        PRIMARY KEY,
    outbox_table      text        NOT NULL,
    system_identifier text        NOT NULL,
    confirmed_lsn     pg_lsn,
    caught_up_at      timestamptz,
    updated_at        timestamptz NOT NULL DEFAULT now()
);
