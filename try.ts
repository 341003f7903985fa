import { startEtcdCluster } from './src/cluster/etcd-cluster.ts';
import { openEtcdStorage } from './src/apiserver/storage/etcd.ts';
import { mkdtempSync } from 'node:fs';
const dir = mkdtempSync('/tmp/etcdtry-');
const c = await startEtcdCluster(dir, { fastElections: true });
const s = await openEtcdStorage({ endpoints: c.client.endpoints });
const leader = await c.leader();
console.log('leader', leader);
await c.killMember(leader);
const t0 = Date.now();
for (let i = 0; i < 20; i++) {
  try {
    const r = await s.create(`/core/configmaps/default/x${i}`, { metadata: { name: 'x' + i } });
    console.log(Date.now() - t0, 'ok', r.revision, s.currentRevision());
  } catch (e) { console.log(Date.now() - t0, 'err', (e as Error).message.slice(0, 200)); }
  await new Promise((r) => setTimeout(r, 200));
}
await s.close();
await c.stop();
