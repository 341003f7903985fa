// test: shared-addresses (its cloud boots a machine on the local cloud's machine addresses; run alone)
// Least privilege on disk (issue #25): a fresh cluster data directory — written by `bosun start`
// (no machines: the API server, releases, update service, bootstrap and CVO) and by `bosun cloud
// serve` with a machine in it, each the real command in its own process — has nothing other users
// can read; a data directory left open by an older bosun is tightened at start, with a log line
// saying what changed; a store that cannot be tightened safely is refused.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { after, test } from 'node:test';
import { freePort } from '../../src/common/listen.js';
import { openSqliteStorage } from '../../src/apiserver/storage/sqlite.js';
import { bosunBin, runBosun } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

const root = mkdtempSync(join(tmpdir(), 'bosun-perms-'));
const children: ChildProcess[] = [];
after(async () => {
  for (const child of children) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }
  rmSync(root, { recursive: true, force: true });
});

/** Starts `bosun …` and resolves once its output matches `ready`; output keeps collecting in `out`. */
async function startBosun(args: string[], ready: RegExp, env: NodeJS.ProcessEnv = {}): Promise<{ child: ChildProcess; out: () => string }> {
  const child = spawn(process.execPath, [bosunBin, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  // An exit before it is ready fails at once, with everything it printed (its error is last).
  await eventually(`bosun ${args[0]} ready`, () => ready.test(out) || child.exitCode !== null || child.signalCode !== null, { timeoutMs: 240_000, intervalMs: 200, detail: () => out.slice(-3000) });
  if (!ready.test(out)) assert.fail(`bosun ${args.join(' ')} exited (${child.signalCode ?? child.exitCode}) before it was ready; it printed:\n${out}`);
  return { child, out: () => out };
}

async function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGINT'): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill(signal);
  await exited;
}

/**
 * Every file under `dir` another user (not the owner, in its group or not) could read: its own
 * group/other read bit, and the search bit for them on every directory from `dir` down to it
 * (what is above the data directory is the user's choice, and a temporary directory's is 0700).
 */
function readableByOthers(dir: string): string[] {
  const reachable = (path: string, bit: number): boolean => {
    for (let d = dirname(path); ; d = dirname(d)) {
      if ((statSync(d).mode & bit) === 0) return false;
      if (d === dir) return true;
    }
  };
  const found: string[] = [];
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isSymbolicLink()) continue;
      if (entry.isDirectory()) walk(path);
      const mode = lstatSync(path).mode;
      if (((mode & 0o004) && reachable(path, 0o001)) || ((mode & 0o040) && reachable(path, 0o010))) found.push(relative(dir, path));
    }
  };
  walk(dir);
  return found;
}

/** Files and directories outside the machine roots that have group/other bits (directories: read or write). */
function openModes(dir: string): string[] {
  const found: string[] = [];
  const walk = (current: string): void => {
    for (const entry of readdirSync(current, { withFileTypes: true })) {
      const path = join(current, entry.name);
      if (entry.isSymbolicLink() || (current === dir && entry.name === 'machines')) continue;
      const mode = lstatSync(path).mode;
      if (mode & (entry.isDirectory() ? 0o066 : 0o077)) found.push(`${relative(dir, path)} ${(mode & 0o7777).toString(8)}`);
      if (entry.isDirectory()) walk(path);
    }
  };
  walk(dir);
  return found;
}

test('a fresh data directory written by bosun start and bosun cloud serve has nothing other users can read', async () => {
  const dataDir = join(root, 'fresh');
  const [api, updates, mcs] = [await freePort(), await freePort(), await freePort()];
  const start = await startBosun(
    ['start', '--data-dir', dataDir, '--masters', '0', '--workers', '0', '--listen', `127.0.0.1:${api}`, '--update-service', `127.0.0.1:${updates}`, '--machine-config-server', `127.0.0.1:${mcs}`, '--monitoring', 'false'],
    /bosun is up/,
  );
  const cloud = await startBosun(['cloud', 'serve', '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--ignition', 'builtin', '--boot-delay', '0s'], /local cloud listening/);
  const created = await runBosun(['cloud', 'create', 'perm-check', '--data-dir', dataDir]);
  assert.equal(created.code, 0, created.stderr);
  await eventually('the machine root written', () => existsSync(join(dataDir, 'machines')) && readdirSync(join(dataDir, 'machines')).length === 1, { timeoutMs: 60_000 });
  try {
    // While everything runs (SQLite's -wal and -shm exist only then), and again after.
    for (const when of ['running', 'stopped']) {
      assert.equal(statSync(dataDir).mode & 0o777, 0o700, `the data directory is 0700 (${when})`);
      for (const store of ['state.db', 'cloud/state.db', ...(when === 'running' ? ['state.db-wal', 'state.db-shm', 'cloud/state.db-wal', 'cloud/state.db-shm'] : [])]) {
        assert.equal(statSync(join(dataDir, store)).mode & 0o777, 0o600, `${store} is 0600 (${when})`);
      }
      assert.deepEqual(openModes(dataDir), [], `nothing outside the machine roots open to group or other users (${when})`);
      assert.deepEqual(readableByOthers(dataDir), [], `no file other users can read (${when})`);
      if (when === 'running') {
        await stop(cloud.child, 'SIGTERM');
        await stop(start.child);
      }
    }
    assert.doesNotMatch(start.out(), /was open to other users/, 'nothing needed tightening in a fresh directory');
  } finally {
    await stop(cloud.child, 'SIGTERM');
    await stop(start.child);
  }
});

test('a data directory left open to other users is tightened at start, saying what changed', async () => {
  const dataDir = join(root, 'old');
  mkdirSync(join(dataDir, 'pki'), { recursive: true });
  // As an older bosun left it: a store with its WAL, a key and a kubeconfig, all 0644 in 0755 directories.
  const old = openSqliteStorage(join(dataDir, 'state.db'));
  await old.create('/core/namespaces//kept', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'kept' } });
  await old.close();
  writeFileSync(join(dataDir, 'state.db-wal'), '');
  writeFileSync(join(dataDir, 'kubeconfig'), 'apiVersion: v1\n');
  for (const [path, mode] of [['.', 0o755], ['pki', 0o755], ['state.db', 0o644], ['state.db-wal', 0o644], ['kubeconfig', 0o644]] as const) chmodSync(join(dataDir, path), mode);
  assert.deepEqual(readableByOthers(dataDir).sort(), ['kubeconfig', 'pki', 'state.db', 'state.db-wal'], 'the check sees what is open');

  const server = await startBosun(['apiserver', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], /API server listening/, { BOSUN_LOG_LEVEL: 'warn' });
  try {
    for (const [path, mode] of [['state.db', 0o600], ['kubeconfig', 0o600], ['pki/ca.key', 0o600], ['.', 0o700], ['pki', 0o700]] as const) {
      assert.equal(statSync(join(dataDir, path)).mode & 0o777, mode, `${path} is ${mode.toString(8)} after the start`);
    }
    assert.match(server.out(), new RegExp(`${join(dataDir, 'state.db')} was open to other users \\(mode 0644\\): changed it to 0600`));
    assert.match(server.out(), /tightened \d+ paths? under .* that other users could read/);
    assert.deepEqual(readableByOthers(dataDir), []);
  } finally {
    await stop(server.child, 'SIGTERM');
  }
});

test('a store that cannot be tightened safely (a symbolic link) is refused with a clear message', async () => {
  const dataDir = join(root, 'linked');
  mkdirSync(dataDir, { mode: 0o700 });
  const elsewhere = join(root, 'elsewhere.db');
  writeFileSync(elsewhere, '');
  chmodSync(elsewhere, 0o644);
  symlinkSync(elsewhere, join(dataDir, 'state.db'));
  const r = await runBosun(['apiserver', '--data-dir', dataDir, '--listen', '127.0.0.1:0'], { timeoutMs: 60_000 });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /state\.db is a symbolic link: bosun keeps its store as a plain file in the data directory and will not change the mode of whatever it points to/);
  assert.equal(statSync(elsewhere).mode & 0o777, 0o644, 'the file it points to is left alone');
});
