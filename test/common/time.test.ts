// The two timestamp forms Kubernetes objects carry.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { rfc3339, rfc3339Micro } from '../../src/common/time.js';

test('metav1.Time and metav1.MicroTime forms', () => {
  const rows: [Date, string, string][] = [
    [new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678)), '2024-01-02T03:04:05Z', '2024-01-02T03:04:05.678000Z'],
    [new Date(Date.UTC(1999, 11, 31, 23, 59, 59, 0)), '1999-12-31T23:59:59Z', '1999-12-31T23:59:59.000000Z'],
  ];
  for (const [date, time, micro] of rows) {
    assert.equal(rfc3339(date), time);
    assert.equal(rfc3339Micro(date), micro);
  }
  assert.match(rfc3339(), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/, 'now by default');
});

test("now's text is kept for its second and follows the clock across seconds, backwards too", (t) => {
  t.mock.timers.enable({ apis: ['Date'], now: Date.UTC(2026, 10, 29, 3, 4, 5, 100) });
  assert.equal(rfc3339(), '2026-11-29T03:04:05Z');
  t.mock.timers.tick(899);
  assert.equal(rfc3339(), '2026-11-29T03:04:05Z');
  t.mock.timers.tick(1);
  assert.equal(rfc3339(), '2026-11-29T03:04:06Z');
  t.mock.timers.setTime(Date.UTC(2025, 0, 1, 0, 0, 0, 0));
  assert.equal(rfc3339(), '2025-01-01T00:00:00Z');
});
