// docs/architecture.md's Layout section names every folder of src/ (and the folders inside each
// component), so the map a newcomer reads cannot drift from the tree: a folder added, moved or
// renamed without the doc fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const dirs = (path: string) => readdirSync(path).filter((n) => statSync(join(path, n)).isDirectory() && n !== 'generated');

test("docs/architecture.md's layout names every folder of src/ and of each component", () => {
  const doc = readFileSync('docs/architecture.md', 'utf8');
  const layout = /## Layout\n[^#]*?```\n([\s\S]*?)```/.exec(doc)?.[1];
  assert.ok(layout, 'docs/architecture.md has a "## Layout" section with a code block');
  const missing: string[] = [];
  for (const top of dirs('src')) {
    if (!new RegExp(`^\\s+${top}/`, 'm').test(layout)) missing.push(`src/${top}/`);
    for (const inner of dirs(join('src', top))) {
      // Named as `top/inner/`, or as `inner/` in its component's entry.
      if (!new RegExp(`(^|[\\s(,])(${top}/)?${inner}/`, 'm').test(layout)) missing.push(`src/${top}/${inner}/`);
    }
  }
  assert.deepEqual(missing, [], `folders missing from docs/architecture.md's layout: ${missing.join(', ')}`);
});
