// bosun's own releases end to end: build every version in release-payload/ with the real release
// build, sign each, serve them with the update service, and walk the graph as a cluster would:
// each channel offers exactly the expected updates, the blocked edge is gone, the conditional one
// carries its Always risk, and every offered payload's signature is fetched over HTTP and verifies.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildRelease } from '../../src/cvo/payload/build.js';
import { generateSigningKey, readKeyring, signRelease, verifyReleaseSignature } from '../../src/release/signature.js';
import { SignatureError } from '../../src/release/signature-error.js';
import { fetchSignatures, storeSignature } from '../../src/release/signature-store.js';
import { startUpdateService, type UpdateService } from '../../src/update-service/server.js';
import { fetchUpdateGraph } from '../../src/cvo/updates/upstream.js';
import { walkGraph } from '../../src/cvo/updates/graph-walk.js';
import { evaluateConditionalUpdate } from '../../src/cvo/updates/risks.js';

let dir: string;
let svc: UpdateService;
let publicKey: string;
const versions = readdirSync('release-payload/releases').map((f) => f.replace(/\.yaml$/, ''));

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bosun-updatesvc-e2e-'));
  const key = await generateSigningKey('bosun e2e', undefined, 2048);
  publicKey = key.publicKey;
  for (const version of versions) {
    const built = buildRelease({ version, from: 'release-payload', cvoManifests: 'manifests', store: join(dir, 'store') });
    storeSignature(join(dir, 'signatures'), built.pullspec.split('@')[1], await signRelease(built.pullspec, key.privateKey));
  }
  svc = await startUpdateService({ graphData: 'release-payload', releases: join(dir, 'store'), signatures: join(dir, 'signatures'), port: 0 });
});

after(async () => {
  await svc.close();
  rmSync(dir, { recursive: true, force: true });
});

const expectations: { channel: string; from: string; available: string[]; conditional: string[] }[] = [
  { channel: 'stable-1.0', from: '1.0.0', available: ['1.0.1'], conditional: ['1.0.2'] },
  { channel: 'stable-1.0', from: '1.0.1', available: ['1.0.2'], conditional: [] },
  { channel: 'stable-1.1', from: '1.0.0', available: ['1.0.1'], conditional: ['1.0.2'] }, // 1.0.0 -> 1.1.0 is blocked
  { channel: 'stable-1.1', from: '1.0.1', available: ['1.1.0', '1.0.2'], conditional: [] },
  { channel: 'stable-1.1', from: '1.0.2', available: ['1.1.0'], conditional: [] }, // 1.1.1 is not in stable yet
  { channel: 'fast-1.1', from: '1.0.2', available: ['1.1.1', '1.1.0'], conditional: [] },
  { channel: 'fast-1.1', from: '1.1.0', available: ['1.1.1'], conditional: [] },
];

for (const e of expectations) {
  test(`e2e: a cluster on ${e.from} in ${e.channel} sees ${e.available.join(', ') || 'nothing'}${e.conditional.length ? ` and, with risks, ${e.conditional.join(', ')}` : ''}`, async () => {
    const graph = await fetchUpdateGraph({ upstream: svc.url, channel: e.channel, version: e.from });
    const choices = walkGraph(graph, e.from);
    assert.deepEqual(choices.availableUpdates.map((u) => u.version), e.available);
    assert.deepEqual(choices.conditionalUpdates.map((u) => u.release.version), e.conditional);
    for (const c of choices.conditionalUpdates) {
      const recommended = await evaluateConditionalUpdate(c, undefined);
      assert.equal(recommended.status, 'False');
      assert.equal(recommended.reason, 'LeaderElectionRestart');
    }
  });
}

test('e2e: every offered payload has a signature in the served store that verifies for it', async () => {
  const keyring = await readKeyring(publicKey);
  const graph = await fetchUpdateGraph({ upstream: svc.url, channel: 'fast-1.1' });
  assert.equal(graph.nodes.length, 5);
  for (const node of graph.nodes) {
    const digest = node.payload.split('@')[1];
    // `<service>/signatures` is a signature store URL, as spec.signatureStores would name it.
    const sigs = await fetchSignatures(`${svc.url}/signatures`, digest);
    assert.equal(sigs.length, 1);
    const v = await verifyReleaseSignature(sigs[0], digest, keyring);
    assert.equal(v.claim.critical.identity['docker-reference'], node.payload);
    // The payload itself is served too, and its metadata names the node's version.
    const meta = (await (await fetch(`${svc.url}/releases/${digest.replace(':', '=')}/release-manifests/release-metadata`)).json()) as { version: string };
    assert.equal(meta.version, node.version);
  }
  // One payload's signature does not vouch for another payload.
  const [a, b] = graph.nodes.map((n) => n.payload.split('@')[1]);
  const [sigA] = await fetchSignatures(`${svc.url}/signatures`, a);
  await assert.rejects(verifyReleaseSignature(sigA, b, keyring), (err: Error) => err instanceof SignatureError && err.reason === 'DigestMismatch');
  assert.deepEqual(await fetchSignatures(`${svc.url}/signatures`, `sha256:${'0'.repeat(64)}`), []);
  await assert.rejects(fetchSignatures('http://127.0.0.1:1/signatures', a, { timeoutMs: 2000 }), /unreachable/);
});
