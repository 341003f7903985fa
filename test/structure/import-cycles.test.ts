// No import cycles in src/: a module never reaches itself through its imports, type-only imports
// and dynamic import() included (a cycle through a type still ties two modules' meanings
// together, and one change of a type-only import to a value import makes it a load-order bug).
// The module graph is dpdm's, read with the TypeScript parser as the sources are written and
// resolved with the project's tsconfig, as tsc resolves them.
import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseCircular, parseDependencyTree, type DependencyTree } from 'dpdm';

const ROOT = join(import.meta.dirname, '../..');

/** The imports of every .ts file under `dir` of `cwd`, type-only and dynamic ones included. */
function moduleGraph(cwd: string, dir: string): Promise<DependencyTree> {
  return parseDependencyTree(`${dir}/**/*.ts`, { cwd, context: cwd, tsconfig: join(ROOT, 'tsconfig.json'), transform: false, skipDynamicImports: false });
}

/** The relative imports that did not resolve to a file: an edge the cycle check would not see. */
function unresolved(tree: DependencyTree): string[] {
  return Object.values(tree).flatMap((deps) => (deps ?? []).filter((d) => d.request.startsWith('.') && d.id === null).map((d) => `${d.issuer}: ${d.request}`));
}

test('the cycle check sees a cycle made of type-only imports', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-cycles-'));
  try {
    writeFileSync(join(dir, 'a.ts'), "import type { B } from './b.js';\nexport interface A { b?: B }\n");
    writeFileSync(join(dir, 'b.ts'), "import type { A } from './a.js';\nexport interface B { a?: A }\n");
    writeFileSync(join(dir, 'c.ts'), "import type { A } from './a.js';\nexport type C = A;\n");
    const tree = await moduleGraph(dir, '.');
    assert.deepEqual(unresolved(tree), []);
    assert.deepEqual(parseCircular(tree), [['a.ts', 'b.ts']]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('src/ has no import cycle', async () => {
  const tree = await moduleGraph(ROOT, 'src');
  assert.deepEqual(unresolved(tree), [], 'every relative import in src/ resolves, so that the graph has every edge');
  const cycles = parseCircular(tree);
  assert.deepEqual(cycles, [], `import cycles in src/:\n${cycles.map((c) => `  ${[...c, c[0]].join(' -> ')}`).join('\n')}`);
});
