// JSON equality as the API server, the CVO's merge and patches compare values.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { jsonEqual } from '../../src/common/json.js';

test('jsonEqual: structure and values, not key order; undefined keys count as absent', () => {
  const rows: [unknown, unknown, boolean][] = [
    [{ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }, true],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{ a: 1, b: undefined }, { a: 1 }, true],
    [[1, 2], [2, 1], false],
    [[1], { 0: 1 }, false],
    [null, {}, false],
    [null, null, true],
    ['1', 1, false],
    [{ a: null }, { a: undefined }, false],
  ];
  for (const [a, b, want] of rows) {
    assert.equal(jsonEqual(a, b), want, `${JSON.stringify(a)} vs ${JSON.stringify(b)}`);
    assert.equal(jsonEqual(b, a), want, 'symmetric');
  }
});
