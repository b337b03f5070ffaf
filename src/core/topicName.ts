/** Kafka's topic rules (org.apache.kafka.common.internals.Topic). */
export function explainBadTopicName(value: string): string | undefined {
  if (value.length === 0 || value.length > 249) return 'must be 1 to 249 characters long';
  if (value === '.' || value === '..') return 'cannot be "." or ".."';
  if (!/^[A-Za-z0-9._-]+$/.test(value)) return 'may contain only ASCII letters, digits, ".", "_" and "-"';
  return undefined;
}

export type TopicChoice = { readonly topic: string } | { readonly template: string };

/** The topic of one event: the fixed --topic, or --topic-template with {aggregate_type} and {event_type}. */
export function resolveTopic(
  choice: TopicChoice,
  event: { readonly aggregateType: string; readonly eventType: string },
): { ok: true; topic: string } | { ok: false; reason: string } {
  if ('topic' in choice) return { ok: true, topic: choice.topic };
  const topic = choice.template
    .replaceAll('{aggregate_type}', event.aggregateType)
    .replaceAll('{event_type}', event.eventType);
  const problem = explainBadTopicName(topic);
  return problem === undefined
    ? { ok: true, topic }
    : { ok: false, reason: `topic ${JSON.stringify(topic)} from --topic-template ${problem}` };
}
