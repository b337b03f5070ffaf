import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import kafkajsRecord, {
  type RecordArgs,
  type RecordEncoder,
} from 'kafkajs/src/protocol/recordBatch/record/v0';

import { createRecordEncoder } from '../../../../src/sink/kafka/createRecordEncoder.js';
import { speedUpRecordEncoding } from '../../../../src/sink/kafka/speedUpRecordEncoding.js';
import { makeRecordCases, PLAIN_CASES, range } from '../../../support/kafkaRecordCases.js';

/** What an encoder makes of a record: its bytes, or the error it throws. */
function outcome(encode: RecordEncoder, args: RecordArgs): Buffer | string {
  try {
    return encode(args).buffer;
  } catch (error) {
    return `${(error as Error).constructor.name}: ${(error as Error).message}`;
  }
}

describe('createRecordEncoder', () => {
  for (const encoding of ['as kafkajs encodes', 'with walbox’s encoder patch'] as const) {
    it(`writes every record to the very bytes kafkajs 2.2.4 does, or throws its error (${encoding})`, () => {
      if (encoding !== 'as kafkajs encodes') speedUpRecordEncoding();
      const handedOver: number[] = [];
      let current = -1;
      const walbox = createRecordEncoder((args) => {
        handedOver.push(current);
        return kafkajsRecord(args);
      });
      const cases = makeRecordCases();
      let refused = 0;
      for (const [i, args] of cases.entries()) {
        current = i;
        const expected = outcome(kafkajsRecord, args);
        if (typeof expected === 'string') refused++;
        assert.deepEqual(
          outcome(walbox, args),
          expected,
          `record ${i}: ${JSON.stringify(args).slice(0, 200)}`,
        );
      }
      assert.ok(refused >= 2, `kafkajs refused only ${refused} of the records`);
      // Strings and Buffers (walbox's records among them) are written here; only the odd shapes go to kafkajs.
      assert.deepEqual(handedOver, range(PLAIN_CASES, cases.length));
    });
  }
});
