// `npm run lint` refuses `any` in src/ outside the files eslint.config.js lists as untyped
// boundaries, and src/ keeps no reference to the untyped `Obj` alias: API objects are typed.
import { strict as assert } from 'node:assert';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';
import ts from 'typescript';

const ROOT = join(import.meta.dirname, '../..');
/** The files eslint.config.js lets use `any` (a JavaScript module: its export read as data). */
const config = '../../eslint.config.js';
const { UNTYPED_BOUNDARY_FILES } = (await import(config)) as { UNTYPED_BOUNDARY_FILES: string[] };
const eslint = new ESLint({ cwd: ROOT });

async function anyErrors(file: string, code: string): Promise<number> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath: join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === '@typescript-eslint/no-explicit-any').length;
}

test('lint: `any` is an error in src/, allowed in tests and in the listed boundary files', async () => {
  assert.equal(await anyErrors('src/capi/machine-controller.ts', 'export const f = (x: any) => x;'), 1);
  assert.equal(await anyErrors('src/apiserver/handlers/read.ts', 'export type Loose = Record<string, any>;'), 1);
  assert.equal(await anyErrors('test/capi/machine.test.ts', 'export const f = (x: any) => x;'), 0);
  for (const file of UNTYPED_BOUNDARY_FILES) assert.equal(await anyErrors(file, 'export const f = (x: any) => x;'), 0, file);
});

/** Every .ts file of src/ but the generated types. */
function sources(dir = 'src'): string[] {
  return readdirSync(join(ROOT, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) return name === 'generated' ? [] : sources(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

test('src/ refers to the untyped Obj alias nowhere', () => {
  const uses: string[] = [];
  for (const file of sources()) {
    const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
    (function visit(node: ts.Node) {
      if (ts.isTypeReferenceNode(node) && node.typeName.getText(source) === 'Obj') uses.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`);
      ts.forEachChild(node, visit);
    })(source);
  }
  assert.deepEqual(uses, []);
});
