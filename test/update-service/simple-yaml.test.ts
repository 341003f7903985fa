// The fast graph-data YAML reader agrees with the full parser on every real file it accepts,
// accepts most of them, and declines what lies outside its subset.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { parseSimpleYaml } from '../../src/update-service/simple-yaml.js';

const REAL = '/work/shared/data/cincinnati-graph-data';
const files = [
  ...['channels', 'blocked-edges'].flatMap((d) => readdirSync(join(REAL, d)).map((f) => join(REAL, d, f))),
  ...['channels', 'blocked-edges', 'releases'].flatMap((d) => readdirSync(join('release-payload', d)).map((f) => join('release-payload', d, f))),
];

test('simple yaml: identical to the yaml package on every real graph-data file it reads', () => {
  let fast = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    const got = parseSimpleYaml(text);
    if (got === undefined) continue;
    fast++;
    assert.deepEqual(got, parse(text), file);
  }
  assert.ok(fast / files.length > 0.9, `only ${fast} of ${files.length} files took the fast path`);
});

test('simple yaml: declines what is outside its subset', () => {
  const outside = [
    'a: 1\n', // a number
    'a: true\n',
    'a: "quoted"\n',
    'a: [x, y]\n',
    'a:\n', // null
    'a: x # comment\n',
    'a: long\n  continued\n',
    '---\na: x\n',
    'a:\tx\n',
    'a: x\na: y\n', // duplicate key
    'a: >\n  folded\n',
    'a: &anchor x\n',
  ];
  for (const text of outside) assert.equal(parseSimpleYaml(text), undefined, JSON.stringify(text));
});

test('simple yaml: block scalars, nested lists and comments', () => {
  const text = '# head\nto: 4.1.0\nmessage: |-\n  line one\n\n  line two\nkeep: |\n  kept\nrules:\n  - type: PromQL\n    promql:\n      promql: |\n        max(x)\n        or y\nversions:\n- 4.1.0\n- 4.1.1-rc.0\n';
  const got = parseSimpleYaml(text);
  assert.deepEqual(got, parse(text));
  assert.deepEqual(got, {
    to: '4.1.0',
    message: 'line one\n\nline two',
    keep: 'kept\n',
    rules: [{ type: 'PromQL', promql: { promql: 'max(x)\nor y\n' } }],
    versions: ['4.1.0', '4.1.1-rc.0'],
  });
});
