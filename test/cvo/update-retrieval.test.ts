// The time of the last successful retrieval of updates (OpenShift's LastSyncOrConfigChange,
// exported as cluster_version_operator_update_retrieval_timestamp_seconds): set by a successful
// poll and by a change of upstream or channel, kept when a poll fails.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type * as api from '../../src/api/index.js';
import { FakeClock } from '../../src/kube/clock.js';
import { UpdatePoller } from '../../src/cvo/available-updates.js';

const IMAGE = 'bosun.local/release@sha256:' + 'a'.repeat(64);

test('UpdatePoller: the last retrieval is a success or a change of upstream/channel, not a failure', async () => {
  let healthy = true;
  const server = createServer((_req, res) => {
    if (!healthy) {
      res.writeHead(500).end('down');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ nodes: [{ version: '1.0.0', payload: IMAGE, metadata: {} }], edges: [] }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const upstream = `http://127.0.0.1:${(server.address() as AddressInfo).port}/graph`;
  const clock = new FakeClock(1_000_000);
  const poller = new UpdatePoller({ clock, intervalMs: 60_000 });
  const cv = (channel: string) =>
    ({
      apiVersion: 'config.openshift.io/v1',
      kind: 'ClusterVersion',
      metadata: { name: 'version' },
      spec: { clusterID: 'c', upstream, channel },
      status: { history: [{ state: 'Completed', startedTime: '2026-01-01T00:00:00Z', completionTime: '2026-01-01T00:01:00Z', version: '1.0.0', image: IMAGE, verified: false }] },
    }) as unknown as api.ClusterVersion;
  try {
    assert.equal(poller.lastRetrieval(), undefined);
    const ok = await poller.poll(cv('stable'));
    assert.ok(ok);
    assert.equal(ok({}).conditions?.find((c) => c.type === 'RetrievedUpdates')?.status, 'True');
    assert.equal(poller.lastRetrieval(), 1_000_000);
    healthy = false;
    clock.advance(60_000);
    const failed = await poller.poll(cv('stable'));
    assert.equal(failed?.({}).conditions?.find((c) => c.type === 'RetrievedUpdates')?.status, 'False');
    assert.equal(poller.lastRetrieval(), 1_000_000, 'a failed poll keeps the last success');
    clock.advance(1_000);
    await poller.poll(cv('fast'));
    assert.equal(poller.lastRetrieval(), 1_061_000, 'a change of channel counts');
  } finally {
    server.close();
  }
});
