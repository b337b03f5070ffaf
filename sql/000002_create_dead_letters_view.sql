-- Rows that gave up: dead-lettered and never published since.
CREATE OR REPLACE VIEW {{schema}}.{{dead_letters_view}} AS
SELECT *
  FROM {{schema}}.{{table}}
 WHERE dead_lettered_at IS NOT NULL
   AND processed_at IS NULL;
