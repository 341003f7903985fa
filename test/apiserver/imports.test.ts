// The API server's modules import each other without a cycle — type-only imports included, as a
// circle through a type still ties every file in it to every other (the strategies in kinds/ and
// the registry once formed one of 29 files). Imports are read from the sources as written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../../src/apiserver');
const IMPORT = /(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : []));
}

/** Every module's imports of other modules of the API server. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(ROOT)) {
    const targets = [...readFileSync(file, 'utf8').matchAll(IMPORT)]
      .map((m) => resolve(dirname(file), (m[1] ?? m[2]).replace(/\.js$/, '.ts')))
      .filter((target) => target.startsWith(ROOT + '/') && existsSync(target));
    graph.set(file, targets);
  }
  return graph;
}

/** One cycle of the graph as a list of files (first = last), or undefined. */
function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const done = new Set<string>();
  const path: string[] = [];
  const onPath = new Set<string>();
  const visit = (file: string): string[] | undefined => {
    if (onPath.has(file)) return [...path.slice(path.indexOf(file)), file];
    if (done.has(file)) return undefined;
    path.push(file);
    onPath.add(file);
    for (const next of graph.get(file) ?? []) {
      const cycle = visit(next);
      if (cycle) return cycle;
    }
    path.pop();
    onPath.delete(file);
    done.add(file);
    return undefined;
  };
  for (const file of graph.keys()) {
    const cycle = visit(file);
    if (cycle) return cycle;
  }
  return undefined;
}

test('no import cycle among the API server\'s modules', () => {
  const graph = importGraph();
  assert.ok(graph.size > 100, `only ${graph.size} modules found under ${ROOT}`);
  const cycle = findCycle(graph);
  assert.equal(cycle, undefined, `import cycle: ${cycle?.map((f) => relative(ROOT, f)).join(' → ')}`);
});
