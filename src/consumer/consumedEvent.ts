/** A walbox event as a consumer receives it from Kafka, decoded by toConsumedEvent(). */
export interface ConsumedEvent {
  /** The outbox row's id (the `id` header): the key consumers deduplicate on. */
  readonly id: string;
  readonly eventType: string;
  readonly aggregateType: string;
  readonly aggregateId: string;
  /**
   * The row's created_at as walbox sends it: ISO 8601 UTC with microseconds. Kept as text because a Date would
   * drop the microseconds.
   */
  readonly createdAt: string;
  /** The Kafka value parsed with JSON.parse (numbers beyond 2^53 lose precision: read payloadJson then). */
  readonly payload: unknown;
  /** The Kafka value as sent: the payload's jsonb text. */
  readonly payloadJson: string;
  /**
   * Every header of the message as text, the reserved ones above included, plus the row's own headers (trace
   * context, …). A header name that repeats keeps its last value.
   */
  readonly headers: Readonly<Record<string, string>>;
}
