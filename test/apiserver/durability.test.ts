// Durability through the whole stack: `bosun apiserver` as a child process, concurrent writes
// over HTTPS, SIGKILL at a random moment; after a restart every acknowledged write is there.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { freePort } from '../../src/common/listen.js';
import { bosunBin } from '../helpers/cli.js';
import { httpsJson } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';

async function startChild(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [bosunBin, 'apiserver', '--data-dir', dataDir, '--listen', `127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  // (Through tsx on a loaded machine a start takes 10 s or more; one that never comes is stopped.)
  try {
    await eventually('the API server to start', () => out.includes('API server listening on'), { timeoutMs: 60_000, intervalMs: 50, detail: () => out });
  } catch (e) {
    child.kill('SIGKILL');
    throw e;
  }
  return child;
}


test('every acknowledged write survives SIGKILL of bosun apiserver', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-durability-'));
  const port = await freePort();
  let child = await startChild(dataDir, port);
  try {
    const kubeconfig = YAML.parse(readFileSync(join(dataDir, 'kubeconfig'), 'utf8'));
    const token = kubeconfig.users[0].user.token as string;
    const ca = Buffer.from(kubeconfig.clusters[0].cluster['certificate-authority-data'], 'base64').toString();
    const url = kubeconfig.clusters[0].cluster.server as string;
    const agent = new Agent({ ca, keepAlive: true, maxSockets: 16 });
    const acknowledged = new Map<string, string>();
    let running = true;
    const writer = async (id: number) => {
      for (let n = 0; running; n++) {
        const name = `w${id}-${n}`;
        try {
          const r = await httpsJson(agent, url, token, 'POST', '/api/v1/namespaces/default/configmaps', { body: { metadata: { name }, data: { n: String(n), id: String(id) } } });
          if (r.status === 201) acknowledged.set(name, r.json.metadata.uid);
        } catch {
          return; // the server is gone
        }
      }
    };
    const writers = Array.from({ length: 16 }, (_, i) => writer(i));
    await new Promise((r) => setTimeout(r, 400 + Math.floor(Math.random() * 1200)));
    child.kill('SIGKILL');
    running = false;
    await Promise.all(writers);
    agent.destroy();
    assert.ok(acknowledged.size > 20, `only ${acknowledged.size} writes were acknowledged`);

    child = await startChild(dataDir, port);
    const agent2 = new Agent({ ca });
    const list = await httpsJson(agent2, url, token, 'GET', '/api/v1/namespaces/default/configmaps');
    agent2.destroy();
    assert.equal(list.status, 200);
    const stored = new Map<string, any>((list.json.items as any[]).map((i) => [i.metadata.name, i]));
    for (const [name, uid] of acknowledged) {
      const item = stored.get(name);
      assert.ok(item, `acknowledged ${name} is missing after the restart`);
      assert.equal(item.metadata.uid, uid, `${name} changed`);
      assert.equal(item.data.n, name.split('-')[1]);
    }
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('SIGTERM shuts the server down cleanly, and a restart reuses certificates, token and data', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'bosun-restart-'));
  const port = await freePort();
  try {
    let child = await startChild(dataDir, port);
    const first = readFileSync(join(dataDir, 'kubeconfig'), 'utf8');
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
    child = await startChild(dataDir, port);
    assert.equal(readFileSync(join(dataDir, 'kubeconfig'), 'utf8'), first);
    child.kill('SIGKILL');
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
