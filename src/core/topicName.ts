/** Kafka's limit on a topic name's length (org.apache.kafka.common.internals.Topic). */
const MAX_TOPIC_LENGTH = 249;
const ILLEGAL_TOPIC_CHAR = /[^A-Za-z0-9._-]/u;
/** Values quoted in a reason are cut here: last_error is for people, and a row's text can be long. */
const QUOTE_LIMIT = 100;

type TopicProblem = 'length' | 'dots' | 'chars';

const TOPIC_RULES: Record<TopicProblem, string> = {
  length: `must be 1 to ${MAX_TOPIC_LENGTH} characters long`,
  dots: 'cannot be "." or ".."',
  chars: 'may contain only ASCII letters, digits, ".", "_" and "-"',
};

/** Kafka's topic rules (org.apache.kafka.common.internals.Topic). */
export function explainBadTopicName(value: string): string | undefined {
  const problem = findTopicProblem(value);
  return problem === undefined ? undefined : TOPIC_RULES[problem];
}

function findTopicProblem(value: string): TopicProblem | undefined {
  if (value.length === 0 || value.length > MAX_TOPIC_LENGTH) return 'length';
  if (value === '.' || value === '..') return 'dots';
  if (ILLEGAL_TOPIC_CHAR.test(value)) return 'chars';
  return undefined;
}

/**
 * Where events go: one fixed topic (--topic), or a topic per event from --topic-template. `allow` (from
 * --topic-allow) must match a templated topic whole: build it anchored, `new RegExp(`^(?:${source})$`)`, and
 * without the `g` or `y` flag (they make `test` stateful).
 */
export type TopicChoice =
  { readonly topic: string } | { readonly template: string; readonly allow?: RegExp | undefined };

export type TopicResolution = { ok: true; topic: string } | { ok: false; reason: string };

/**
 * The template's placeholders and the event fields that fill them. `${routedByValue}` is Debezium's name for the
 * routing value (route.topic.replacement), accepted so that its templates can be copied as they are.
 */
const PLACEHOLDER = /\$\{routedByValue\}|\{(aggregate_type|event_type)\}/g;
type Placeholder = 'aggregate_type' | 'event_type';
const FIELD_OF: Record<Placeholder, 'aggregateType' | 'eventType'> = {
  aggregate_type: 'aggregateType',
  event_type: 'eventType',
};

/**
 * The topic of one event: the fixed --topic, or --topic-template with {aggregate_type} (or ${routedByValue})
 * and {event_type}.
 *
 * With a template the topic comes from row content, which whoever writes the outbox controls. The template is
 * filled in one pass with a function replacer, so a value is inserted as it is: `$&`, `` $` ``, `$'` and `$$`
 * are not replacement patterns, and an `{event_type}` written inside an aggregate_type is not expanded again.
 * A topic that breaks Kafka's rules or that --topic-allow does not match is a rejection (the caller
 * dead-letters the event with `reason` as its last_error), never a detour to some other topic.
 */
export function resolveTopic(
  choice: TopicChoice,
  event: { readonly aggregateType: string; readonly eventType: string },
): TopicResolution {
  if ('topic' in choice) return { ok: true, topic: choice.topic };
  const used = new Map<Placeholder, string>();
  const topic = choice.template.replace(PLACEHOLDER, (_match, found: Placeholder | undefined) => {
    const name = found ?? 'aggregate_type';
    const value = event[FIELD_OF[name]];
    used.set(name, value);
    return value;
  });
  const problem = findTopicProblem(topic);
  const allowed = choice.allow === undefined || choice.allow.test(topic);
  if (problem === undefined && allowed) return { ok: true, topic };
  // Only a rejected event pays for the reason's text.
  const origin = `topic ${quote(topic)} from --topic-template ${quote(choice.template)}`;
  if (problem !== undefined) {
    return { ok: false, reason: `${origin} ${TOPIC_RULES[problem]}: ${blame(problem, topic, used)}` };
  }
  return {
    ok: false,
    reason: `${origin} is not allowed by --topic-allow ${String(choice.allow)}: ${describeFields(used)}`,
  };
}

/** Names the field that made the topic illegal (the template's fixed text is checked when the config loads). */
function blame(problem: TopicProblem, topic: string, used: ReadonlyMap<Placeholder, string>): string {
  const fields = [...used];
  if (problem === 'chars') {
    const culprits = fields.flatMap(([name, value]) => {
      const char = ILLEGAL_TOPIC_CHAR.exec(value)?.[0];
      return char === undefined ? [] : [`${name} ${quote(value)} contains ${JSON.stringify(char)}`];
    });
    if (culprits.length > 0) return culprits.join('; ');
  }
  if (problem === 'length' && topic.length > MAX_TOPIC_LENGTH) {
    const filled = fields.filter(([, value]) => value.length > 0).sort(([, a], [, b]) => b.length - a.length);
    if (filled.length > 0) {
      return filled.map(([name, value]) => `${name} is ${value.length} characters long`).join(', ');
    }
  }
  return describeFields(used);
}

/** `aggregate_type "order", event_type is empty`: what the event put into the topic. */
function describeFields(used: ReadonlyMap<Placeholder, string>): string {
  if (used.size === 0) return 'the template itself, which has no placeholder';
  return [...used]
    .map(([name, value]) => (value.length === 0 ? `${name} is empty` : `${name} is ${quote(value)}`))
    .join(', ');
}

/** JSON-quoted (control characters escaped), cut after QUOTE_LIMIT characters. */
function quote(value: string): string {
  return value.length <= QUOTE_LIMIT
    ? JSON.stringify(value)
    : `${JSON.stringify(value.slice(0, QUOTE_LIMIT))}… (${value.length} characters)`;
}
