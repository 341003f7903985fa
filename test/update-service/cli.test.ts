// `bosun update-service` as a process: it starts, prints where it listens, answers, and stops on
// SIGTERM; bad graph data stops it at once with the file named.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bosunBin, runBosun } from '../helpers/cli.js';

test('cli: update-service serves the graph until SIGTERM', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-updatesvc-cli-'));
  const child = spawn(process.execPath, [bosunBin, 'update-service', '--graph-data', 'release-payload', '--releases', join(dir, 'empty-store'), '--listen', '127.0.0.1:0'], { env: { ...process.env, BOSUN_LOG_LEVEL: 'warn' } });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no listening line: ${out}`)), 20_000);
      child.stdout.on('data', (d) => {
        out += d;
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    const r = await fetch(`${url}/api/upgrades_info/v1/graph?channel=stable-1.0`, { headers: { accept: 'application/vnd.redhat.cincinnati.v1+json' } });
    assert.equal(r.status, 200);
    assert.deepEqual(((await r.json()) as { nodes: unknown[] }).nodes, []); // no releases built: an empty graph
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  } finally {
    child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('cli: update-service refuses bad graph data, naming the file', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-updatesvc-cli-'));
  try {
    mkdirSync(join(dir, 'channels'));
    writeFileSync(join(dir, 'channels', 'bad.yaml'), 'name: Not_Valid\nversions: []\n');
    const r = await runBosun(['update-service', '--graph-data', dir, '--releases', join(dir, 'store'), '--listen', '127.0.0.1:0']);
    assert.equal(r.code, 1);
    assert.match(r.stderr, /channels\/bad\.yaml: channel name "Not_Valid"/);
    const listen = await runBosun(['update-service', '--graph-data', dir, '--releases', dir, '--listen', 'nowhere']);
    assert.equal(listen.code, 1);
    assert.match(listen.stderr, /--listen must be HOST:PORT/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
