// Whether dist/ holds a build of the current sources: the compiled entry point must be newer
// than every file under src/. bin/bosun.js runs compiled code only then, so a stale build is
// never run; scripts/build-if-stale.mjs (npm start's prestart) rebuilds when it is not.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repository = fileURLToPath(new URL('..', import.meta.url));
export const compiledEntry = join(repository, 'dist', 'cli', 'main.js');

function newestIn(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestIn(path) : statSync(path).mtimeMs);
  }
  return newest;
}

/** True when root/dist/ was built after the last change to root/src/ (and package.json). */
export function compiledIsFresh(root = repository) {
  let built;
  try {
    built = statSync(join(root, 'dist', 'cli', 'main.js')).mtimeMs;
  } catch {
    return false;
  }
  return built >= Math.max(newestIn(join(root, 'src')), statSync(join(root, 'package.json')).mtimeMs);
}
