// The floor the etcd storage is compared with: plain etcd puts of a ConfigMap-sized JSON value
// through the same client the API server uses (storage/etcd.ts etcdClient), from the same number
// of concurrent writers as the API benchmark.
import { etcdClient } from '../../src/apiserver/storage/etcd.js';
import type { EtcdClientConfig } from '../../src/cluster/etcd-cluster.js';

export async function rawEtcdPuts(config: EtcdClientConfig, count: number, concurrency: number): Promise<number> {
  const client = etcdClient(config);
  const value = Buffer.from(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', namespace: 'default' }, data: { k: 'v' } }));
  try {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = next++; i < count; i = next++) await client.kv.put({ key: Buffer.from(`/raw/${i}`), value });
      }),
    );
    return count / ((performance.now() - started) / 1000);
  } finally {
    client.close();
  }
}
