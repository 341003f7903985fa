// A real etcd for tests, from Debian's etcd-server: a cluster in a temporary directory on random
// loopback ports, stopped (by pid) and removed afterwards. Tests skip without the binary, except
// under CI, where .ci/run installs it and a missing binary is a failure.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ETCD_BINARY, startEtcdCluster, type EtcdCluster, type EtcdClusterOptions } from '../../src/cluster/etcd-cluster.js';

export const skipWithoutEtcd = !existsSync(ETCD_BINARY) && !process.env.CI ? 'etcd not installed (apt-get install etcd-server)' : false;

export interface TestEtcd {
  cluster: EtcdCluster;
  dir: string;
  stop(): Promise<void>;
}

export async function startTestEtcd(options: EtcdClusterOptions = {}): Promise<TestEtcd> {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-etcd-'));
  const cluster = await startEtcdCluster(join(dir, 'etcd'), { fastElections: true, ...options });
  return {
    cluster,
    dir,
    async stop() {
      await cluster.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
