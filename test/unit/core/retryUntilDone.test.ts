import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { retryUntilDone } from '../../../src/core/retryUntilDone.js';
import { SinkError } from '../../../src/sink/sinkError.js';

interface Line {
  level: string;
  fields: Record<string, unknown>;
  message: string;
}

function recordingLogger(lines: Line[]) {
  const log =
    (level: string) =>
    (fields: object, message: string): void => {
      lines.push({ level, fields: fields as Record<string, unknown>, message });
    };
  return { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') };
}

async function failTwice(error: Error, lines: Line[]): Promise<string> {
  let calls = 0;
  return retryUntilDone(
    'publish to Kafka',
    () => {
      calls += 1;
      return calls <= 2 ? Promise.reject(error) : Promise.resolve('done');
    },
    {
      policy: { initialDelayMs: 1, maxDelayMs: 2 },
      logger: recordingLogger(lines),
      observer: {},
      sleep: () => Promise.resolve(),
      signal: new AbortController().signal,
    },
  );
}

describe('retryUntilDone', () => {
  it('logs an outage as a warning with the message and code, the stack at debug only', async () => {
    const lines: Line[] = [];
    const outage = new SinkError('connect ECONNREFUSED 10.0.0.1:9092', { retriable: true });
    assert.equal(await failTwice(outage, lines), 'done');
    const warnings = lines.filter((l) => l.level === 'warn');
    assert.equal(warnings.length, 2);
    for (const { fields, message } of warnings) {
      assert.equal(message, 'publish to Kafka failed; retrying');
      assert.deepEqual(fields['err'], {
        type: 'SinkError',
        message: 'connect ECONNREFUSED 10.0.0.1:9092',
        code: 'SINK_UNAVAILABLE',
      });
    }
    const debug = lines.filter((l) => l.level === 'debug');
    assert.equal(debug.length, 2);
    assert.equal(debug[0]?.fields['err'], outage, 'the whole error, stack included, at debug');
  });

  it('logs a refusal the configuration causes as an error, not as an outage', async () => {
    const lines: Line[] = [];
    const refused = new SinkError('the cluster refused to create Kafka topic t (POLICY_VIOLATION): …', {
      retriable: true,
      topicScoped: true,
      misconfigured: true,
    });
    await failTwice(refused, lines);
    assert.equal(lines.filter((l) => l.level === 'warn').length, 0);
    const errors = lines.filter((l) => l.level === 'error');
    assert.equal(errors.length, 2);
    const [first] = errors;
    assert.ok(first);
    assert.equal(first.message, 'publish to Kafka failed: a configuration error; retrying until it is fixed');
    assert.deepEqual(first.fields['err'], {
      type: 'SinkError',
      message: refused.message,
      code: 'SINK_MISCONFIGURED',
    });
  });
});
