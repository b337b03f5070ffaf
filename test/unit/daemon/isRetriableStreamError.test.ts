import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { isRetriableStreamError } from '../../../src/daemon/isRetriableStreamError.js';
import { PreconditionError, WalboxError } from '../../../src/errors.js';

function pgError(code: string): Error {
  return Object.assign(new Error(`error ${code}`), { code });
}

describe('isRetriableStreamError', () => {
  it('reconnects on a held slot, an invalidated slot and a slot another relay created a moment ago', () => {
    for (const code of ['55006', '55000', '42710', '57P01', '57P03']) {
      assert.equal(isRetriableStreamError(pgError(code)), true, code);
    }
    assert.equal(
      isRetriableStreamError(new WalboxError('REPLICATION_LOST', 'gone', { retriable: true })),
      true,
    );
  });

  it('stops on what a reconnect cannot fix', () => {
    assert.equal(isRetriableStreamError(pgError('42501')), false);
    assert.equal(isRetriableStreamError(new PreconditionError('two_phase slot')), false);
  });
});
