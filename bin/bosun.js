#!/usr/bin/env node
// The `bosun` command. Runs the compiled CLI from dist/ when it is a build of the current sources
// (npm run build; npm start builds first), otherwise the TypeScript sources through tsx, so a
// fresh checkout works either way and a stale build is never run.
import { compiledEntry, compiledIsFresh } from './compiled.js';
import { pathToFileURL } from 'node:url';

// `bosun start` shows its own progress; its components' routine logs would drown it, so they
// default to warnings there (BOSUN_LOG_LEVEL=info brings them back). Set before any logger exists.
if (process.argv[2] === 'start' && !process.env.BOSUN_LOG_LEVEL) process.env.BOSUN_LOG_LEVEL = 'warn';
// The start process is long-lived and holds the API server, the cloud and the machines' agents:
// V8 trades a little speed for memory there (bench:install: some 25 MiB less). Its components' pods
// get their node flags from the node agent (src/cluster/node-agent/runtime.ts).
if (process.argv[2] === 'start') (await import('node:v8')).setFlagsFromString('--optimize-for-size');

if (compiledIsFresh()) {
  await import(pathToFileURL(compiledEntry).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
