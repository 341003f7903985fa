#!/usr/bin/env node
// Counts what is left untyped in src/ (generated files excluded): references to the untyped `Obj`
// alias, and lines with the `any` type. Uses TypeScript's own scanner, so the English word "any" in
// comments and strings is not counted.
//   node scripts/count-untyped.mjs [--files]
import ts from 'typescript';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) { if (name !== 'generated') walk(path); } else if (name.endsWith('.ts')) files.push(path);
  }
})('src');

let objUses = 0;
let anyLines = 0;
const perFile = [];
for (const file of files) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  let obj = 0;
  const lines = new Set();
  (function visit(node) {
    if (node.kind === ts.SyntaxKind.AnyKeyword) lines.add(source.getLineAndCharacterOfPosition(node.getStart()).line);
    if (ts.isTypeReferenceNode(node) && node.typeName.getText() === 'Obj') obj++;
    ts.forEachChild(node, visit);
  })(source);
  objUses += obj;
  anyLines += lines.size;
  if (obj + lines.size) perFile.push([obj + lines.size, file, obj, lines.size]);
}
if (process.argv.includes('--files')) for (const [, file, obj, any] of perFile.sort((a, b) => b[0] - a[0])) console.log(`${String(obj).padStart(4)} Obj ${String(any).padStart(4)} any  ${file}`);
console.log(`untyped: ${objUses} uses of Obj + ${anyLines} lines with any = ${objUses + anyLines} (${files.length} files in src/, generated excluded)`);
