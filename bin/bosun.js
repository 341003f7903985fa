#!/usr/bin/env node
// The `bosun` command. Runs the compiled CLI from dist/ when it has been built (npm run build),
// otherwise the TypeScript sources through tsx, so a fresh checkout works either way.
import { existsSync } from 'node:fs';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
