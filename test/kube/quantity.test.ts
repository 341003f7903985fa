// Kubernetes quantities parse exactly and round up as Quantity.Value()/MilliValue() do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { QuantityError, quantityMilliValue, quantityValue } from '../../src/kube/quantity.js';

test('quantities in every suffix form', () => {
  const cases: Array<[string | number, number, number]> = [
    // input, Value(), MilliValue()
    ['1', 1, 1000],
    [2, 2, 2000],
    ['500m', 1, 500],
    ['0.5', 1, 500],
    ['.5', 1, 500],
    ['1.', 1, 1000],
    ['100m', 1, 100],
    ['0.1m', 1, 1], // rounds up to a whole millicore
    ['250u', 1, 1],
    ['3n', 1, 1],
    ['1k', 1000, 1_000_000],
    ['1M', 1e6, 1e9],
    ['1G', 1e9, 1e12],
    ['1T', 1e12, 1e15],
    ['1Ki', 1024, 1_024_000],
    ['1Mi', 1_048_576, 1_048_576_000],
    ['1.5Gi', 1_610_612_736, 1_610_612_736_000],
    ['128974848', 128_974_848, 128_974_848_000],
    ['129e6', 129_000_000, 129_000_000_000],
    ['1E3', 1000, 1_000_000], // an exponent
    ['1E', 1e18, 1e21], // exa
    ['1e-3', 1, 1],
    ['2.5e+2', 250, 250_000],
    ['+3', 3, 3000],
    ['0', 0, 0],
    ['-1', -1, -1000],
    [1e21, 1e21, 1e24],
  ];
  for (const [input, value, milli] of cases) {
    assert.equal(quantityValue(input), value, `Value(${input})`);
    assert.equal(quantityMilliValue(input), milli, `MilliValue(${input})`);
  }
});

test('malformed quantities are refused with the apimachinery message', () => {
  for (const bad of ['', 'abc', '1.2.3', '1Kb', '1 Gi', '1ki', 'Mi', '1e', '--1', '1e99999', Number.NaN]) {
    assert.throws(() => quantityValue(bad), (e: Error) => e instanceof QuantityError && e.message.startsWith('quantities must match the regular expression'), String(bad));
  }
});
