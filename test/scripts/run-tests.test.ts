// The test runner (scripts/run-tests.mjs) on a test file of its own in a scratch directory: a
// process the file leaves running — one that outlives the file's process, as the local cloud's
// haproxy outlives its cloud, here even out of its process group — is killed when the file ends
// and named in the file's output; and a whole-cluster file
// (marker `test: shared-addresses`) whose tests are done ends even though something it started
// still keeps its process alive.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '../..');

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

test('a file leaving a detached process and a live handle: it ends, and the process is killed and named', { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-run-tests-'));
  try {
    mkdirSync(join(dir, 'test'));
    symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'));
    writeFileSync(join(dir, 'test/leaves.test.ts'), `// test: shared-addresses
import { test, after } from 'node:test';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
test('starts a detached sleeper', () => {
  const child = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
  child.unref();
  writeFileSync('sleeper.pid', String(child.pid));
});
// A handle nothing closes: without --test-force-exit the file would sit out its time bound.
after(() => { setInterval(() => undefined, 1000); });
`);
    // No network namespace needed for this file (it binds nothing); no build of the scratch directory.
    // (NODE_TEST_CONTEXT, set for this file by node's test runner, would make the inner one run nothing.)
    const { NODE_TEST_CONTEXT: _context, ...env } = process.env;
    const r = spawnSync(process.execPath, [join(root, 'scripts/run-tests.mjs')], { cwd: dir, encoding: 'utf8', env: { ...env, TEST_NO_BUILD: '1', TEST_NO_NETNS: '1' }, timeout: 100_000 });
    // Without --test-force-exit the file would sit out its 900 s bound and spawnSync kill the runner.
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    const pid = Number(readFileSync(join(dir, 'sleeper.pid'), 'utf8'));
    assert.equal(alive(pid), false, `the sleeper (pid ${pid}) was killed`);
    assert.match(r.stdout, new RegExp(`left running by this file, killed: pid ${pid}: sleep 600`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
