import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error plain JavaScript module of the bin/ launcher, without type declarations
import { compiledIsFresh } from '../../bin/compiled.js';

test('bin/bosun.js runs dist/ only when it was built after every source change', () => {
  const root = mkdtempSync(join(tmpdir(), 'bosun-compiled-'));
  try {
    const at = (path: string, seconds: number) => {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), '');
      utimesSync(join(root, path), seconds, seconds);
    };
    at('package.json', 100);
    at('src/cli/main.ts', 200);
    at('src/cvo/deep/operator.ts', 300);
    assert.equal(compiledIsFresh(root), false, 'no build yet');
    at('dist/cli/main.js', 250);
    assert.equal(compiledIsFresh(root), false, 'a nested source is newer than the build');
    at('dist/cli/main.js', 300);
    assert.equal(compiledIsFresh(root), true);
    at('package.json', 400);
    assert.equal(compiledIsFresh(root), false, 'package.json changed after the build');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
