#!/usr/bin/env node
// npm start's prestart: compiles src/ into dist/ when the sources are newer than the last build,
// so the local cluster's components run compiled code (faster to start, less memory than tsx).
import { spawnSync } from 'node:child_process';
import { compiledIsFresh } from '../bin/compiled.js';

if (!compiledIsFresh()) {
  process.stdout.write('compiling bosun (npm run build) … ');
  const started = Date.now();
  const tsc = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (tsc.status !== 0) {
    console.error('the build failed; fix the errors above or run `node bin/bosun.js start` to run from source');
    process.exit(tsc.status ?? 1);
  }
  console.log(`done in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}
