import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import {
  listSynchronousStandbyNames,
  mayBecomeSynchronousStandby,
} from '../../../../src/source/wal/synchronousStandbyNames.js';

describe('synchronous_standby_names', () => {
  it('lists the names of every syntax, unquoted and case-folded as PostgreSQL compares them', () => {
    assert.deepEqual(listSynchronousStandbyNames(''), []);
    assert.deepEqual(listSynchronousStandbyNames('s1, S2'), ['s1', 's2']);
    assert.deepEqual(listSynchronousStandbyNames('FIRST 1 (s1, "Walbox")'), ['s1', 'Walbox']);
    assert.deepEqual(listSynchronousStandbyNames('any 2 (*)'), ['*']);
    assert.deepEqual(listSynchronousStandbyNames('2 (a, "b, ""c""")'), ['a', 'b, "c"']);
  });

  it('says when walbox could be chosen: listed by name or by *', () => {
    assert.equal(mayBecomeSynchronousStandby('', 'walbox'), false);
    assert.equal(mayBecomeSynchronousStandby('FIRST 1 (standby1)', 'walbox'), false);
    assert.equal(mayBecomeSynchronousStandby('*', 'walbox'), true);
    assert.equal(mayBecomeSynchronousStandby('ANY 1 (standby1, WALBOX)', 'walbox'), true);
  });
});
