// Label and field selectors: parsing, matching and the errors kube-apiserver gives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  SelectorError,
  formatLabelSelector,
  fromLabelSelectorObject,
  matchesFields,
  matchesLabels,
  parseFieldSelector,
  parseLabelSelector,
  storedSelectorMatches,
} from '../../src/common/label-selectors.js';

const labels = { app: 'web', tier: 'front', 'example.com/team': 'a' };

test('label selector matching table', () => {
  const cases: Array<[string, Record<string, string>, boolean]> = [
    ['', labels, true],
    ['app=web', labels, true],
    ['app==web', labels, true],
    ['app=db', labels, false],
    ['app!=db', labels, true],
    ['missing!=x', labels, true],
    ['app in (web,db)', labels, true],
    ['app in (db)', labels, false],
    ['app notin (db)', labels, true],
    ['missing notin (db)', labels, true],
    ['app', labels, true],
    ['!app', labels, false],
    ['!missing', labels, true],
    ['app=web,tier=front', labels, true],
    ['app=web,tier=back', labels, false],
    ['example.com/team=a, app in (web)', labels, true],
    ['app=', { app: '' }, true],
  ];
  for (const [selector, l, expected] of cases) {
    assert.equal(matchesLabels(parseLabelSelector(selector), l), expected, selector);
  }
});

test('malformed label selectors are errors', () => {
  for (const bad of ['app in ()', 'a=b=c', 'app in (web', ',', 'Bad_Prefix!/x=y', 'x=' + 'v'.repeat(64), '-a=b', 'a b']) {
    assert.throws(() => parseLabelSelector(bad), SelectorError, bad);
  }
});

test('metav1.LabelSelector objects: empty selects all, null selects nothing', () => {
  assert.equal(matchesLabels(fromLabelSelectorObject({}), labels), true);
  assert.equal(matchesLabels(fromLabelSelectorObject(null), labels), false);
  assert.equal(matchesLabels(fromLabelSelectorObject(null), {}), false);
  const s = fromLabelSelectorObject({
    matchLabels: { app: 'web' },
    matchExpressions: [
      { key: 'tier', operator: 'In', values: ['front', 'middle'] },
      { key: 'legacy', operator: 'DoesNotExist' },
    ],
  });
  assert.equal(matchesLabels(s, labels), true);
  assert.equal(matchesLabels(s, { ...labels, legacy: 'yes' }), false);
  assert.equal(formatLabelSelector(s), 'app=web,tier in (front,middle),!legacy');
  assert.throws(() => fromLabelSelectorObject({ matchExpressions: [{ key: 'a', operator: 'Bogus' }] }), /not a valid label selector operator/);
  assert.throws(() => fromLabelSelectorObject({ matchExpressions: [{ key: 'a', operator: 'In', values: [] }] }), /at least one value/);
});

test('field selectors: supported fields only, = == !=', () => {
  const fields: Record<string, string> = { 'metadata.name': 'p1', 'spec.nodeName': 'n1' };
  const supported = ['metadata.name', 'metadata.namespace', 'spec.nodeName'];
  const lookup = (f: string) => fields[f];
  assert.equal(matchesFields(parseFieldSelector('spec.nodeName=n1', supported), lookup), true);
  assert.equal(matchesFields(parseFieldSelector('spec.nodeName==n2', supported), lookup), false);
  assert.equal(matchesFields(parseFieldSelector('metadata.name!=p2,spec.nodeName=n1', supported), lookup), true);
  assert.equal(matchesFields(parseFieldSelector('metadata.namespace=', supported), lookup), true);
  assert.throws(() => parseFieldSelector('spec.bogus=x', supported), /field label not supported: spec.bogus/);
  assert.throws(() => parseFieldSelector('nonsense', supported), SelectorError);
  // Escaped values (fields.EscapeValue) and unescaped specials.
  assert.deepEqual(parseFieldSelector('metadata.name=a\\,b\\=c\\!d\\\\e,spec.nodeName!=n', supported), [
    { field: 'metadata.name', operator: 'Equals', value: 'a,b=c!d\\e' },
    { field: 'spec.nodeName', operator: 'NotEquals', value: 'n' },
  ]);
  assert.throws(() => parseFieldSelector('metadata.name=a=b', supported), /unescaped '='/);
  assert.throws(() => parseFieldSelector('metadata.name=a\\x', supported), /invalid escape sequence/);
});

test('stored selector objects: null selects nothing, {} everything, an unknown operator nothing', () => {
  const rows: [Parameters<typeof storedSelectorMatches>[0], boolean][] = [
    [null, false],
    [undefined, false],
    [{}, true],
    [{ matchLabels: { app: 'web' } }, true],
    [{ matchLabels: { app: 'db' } }, false],
    [{ matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'back'] }] }, true],
    [{ matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['front'] }] }, false],
    [{ matchExpressions: [{ key: 'missing', operator: 'DoesNotExist' }] }, true],
    [{ matchExpressions: [{ key: 'app', operator: 'Exists' }] }, true],
    [{ matchExpressions: [{ key: 'app', operator: 'Near' }] }, false],
  ];
  for (const [selector, want] of rows) assert.equal(storedSelectorMatches(selector, labels), want, JSON.stringify(selector));
});
