#!/usr/bin/env node
// The `bosun` command. Runs the compiled CLI from dist/ when it has been built (npm run build),
// otherwise the TypeScript sources through tsx, so a fresh checkout works either way.
import { existsSync } from 'node:fs';

// `bosun start` shows its own progress; its components' routine logs would drown it, so they
// default to warnings there (BOSUN_LOG_LEVEL=info brings them back). Set before any logger exists.
if (process.argv[2] === 'start' && !process.env.BOSUN_LOG_LEVEL) process.env.BOSUN_LOG_LEVEL = 'warn';

const compiled = new URL('../dist/cli/main.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
