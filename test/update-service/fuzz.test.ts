// The update service fuzzed on the wire (test/helpers/fuzz.ts): malformed requests and slow
// clients. Every request is answered ({kind, value} for its errors) or the connection closed,
// slow clients are cut off, and the graph is still served to a cluster asking for it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startUpdateService, type UpdateService } from '../../src/update-service/server.js';
import { writeReleasesFrom } from '../helpers/release-store.js';
import { assertNoProblems, fuzzSeed, fuzzServer } from '../helpers/fuzz.js';

let dir: string;
let svc: UpdateService;
let digest: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bosun-updatesvc-fuzz-'));
  cpSync('release-payload/channels', join(dir, 'graph-data', 'channels'), { recursive: true });
  const pullspecs = writeReleasesFrom('release-payload/releases', join(dir, 'store'));
  digest = pullspecs.get('1.0.1')!.split('@')[1].replace(':', '=');
  svc = await startUpdateService({ graphData: join(dir, 'graph-data'), releases: join(dir, 'store'), port: 0 });
});
after(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

test('fuzzed requests: answered or closed, slow clients cut off, the graph still served', { timeout: 120_000 }, async (t) => {
  const url = new URL(svc.url);
  const report = await fuzzServer({
    name: 'update-service', seed: fuzzSeed(),
    target: { host: url.hostname, port: Number(url.port) },
    profile: {
      paths: ['/api/upgrades_info/v1/graph?channel=stable-1.0&arch=amd64', '/api/upgrades_info/v1/graph?channel=stable-1.0', '/releases', `/releases/${digest}/`,
        `/releases/${digest}/release-manifests/image-references`, `/signatures/${digest}/signature-1`, '/healthz'],
      methods: ['GET', 'HEAD'],
    },
    slow: ['silent', 'headers', 'request-line', 'held-after-error'],
    good: async () => {
      const r = await fetch(`${svc.url}/api/upgrades_info/v1/graph?channel=stable-1.0`, { headers: { accept: 'application/json' } });
      assert.equal(r.status, 200);
      assert.ok(((await r.json()) as { nodes: unknown[] }).nodes.length > 0);
    },
    judge: (_c, o) => {
      if (o.status === undefined || o.status < 400 || o.body.length === 0) return undefined;
      try {
        const e = JSON.parse(o.body.toString('utf8')) as { kind?: unknown; value?: unknown };
        return typeof e.kind === 'string' && typeof e.value === 'string' ? undefined : `a ${o.status} that is not {kind, value}: ${o.body.toString('utf8').slice(0, 200)}`;
      } catch {
        return `a ${o.status} whose body is not JSON: ${o.body.toString('utf8').slice(0, 200)}`;
      }
    },
  });
  t.diagnostic(report.summary);
  t.diagnostic(JSON.stringify(report.slowClosedMs));
  assertNoProblems(report);
});
