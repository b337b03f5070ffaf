const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `text` can be an outbox event id (the `id` column, a UUID). */
export function isEventId(text: string): boolean {
  return UUID.test(text);
}
