// A real etcd for tests, from Debian's etcd-server: a cluster in a temporary directory on random
// loopback ports, stopped (by pid) and removed afterwards; and API server processes on it. Tests skip without the binary, except
// under CI, where .ci/run installs it and a missing binary is a failure.
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import YAML from 'yaml';
import { startApiServerProcess, type ApiServerProcess } from '../../bench/lib/apiserver-process.js';
import { httpsJson, runKubectl, type HttpResult, type KubectlResult, type RequestOptions } from './apiserver.js';
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

/** A `bosun apiserver` process on etcd, with its own data directory and kubeconfig. */
export interface EtcdApiServer {
  url: string;
  dataDir: string;
  kubeconfigPath: string;
  process: ApiServerProcess;
  request(method: string, path: string, options?: RequestOptions): Promise<HttpResult>;
  kubectl(args: string[]): Promise<KubectlResult>;
  /** Opens a watch (`path` with watch=1); its events collect in `events` until `close()`. */
  watch(path: string): { events: Array<{ type: string; object: any }>; close(): void };
  /** Kills the process (SIGKILL unless said otherwise) and waits for it to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/**
 * Starts `count` API server processes on the etcd at `endpoints`, each in `<dir>/apiserver-<i>`;
 * the first makes the certificates and admin token, the others get a copy of its pki directory,
 * as kube-apiservers behind one address share theirs. `firstIndex` > 0 adds servers to those
 * already started (index 0's pki is copied).
 */
export async function startApiServersOnEtcd(count: number, dir: string, etcdArgs: string[], firstIndex = 0): Promise<EtcdApiServer[]> {
  const start = async (i: number): Promise<EtcdApiServer> => {
    const dataDir = join(dir, `apiserver-${i}`);
    if (i > 0) cpSync(join(dir, 'apiserver-0', 'pki'), join(dataDir, 'pki'), { recursive: true });
    const proc = await startApiServerProcess(dataDir, etcdArgs);
    const kubeconfigPath = join(dataDir, 'kubeconfig');
    const kubeconfig = YAML.parse(readFileSync(kubeconfigPath, 'utf8'));
    const token: string = kubeconfig.users[0].user.token;
    const ca = Buffer.from(kubeconfig.clusters[0].cluster['certificate-authority-data'], 'base64').toString();
    const agent = new Agent({ ca, keepAlive: true });
    return {
      url: proc.url,
      dataDir,
      kubeconfigPath,
      process: proc,
      request: (method, path, options) => httpsJson(agent, proc.url, token, method, path, options),
      kubectl: (args) => runKubectl(kubeconfigPath, args),
      watch(path) {
        const events: Array<{ type: string; object: any }> = [];
        const req = httpsRequest(`${proc.url}${path}`, { agent: new Agent({ ca }), headers: { authorization: `Bearer ${token}` } }, (res) => {
          let buffer = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            buffer += chunk;
            for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
              events.push(JSON.parse(buffer.slice(0, nl)));
              buffer = buffer.slice(nl + 1);
            }
          });
          res.on('error', () => undefined);
        });
        req.on('error', () => undefined);
        req.end();
        return { events, close: () => req.destroy() };
      },
      async kill(signal = 'SIGKILL') {
        agent.destroy();
        if (proc.exitCode !== null || proc.signalCode !== null) return;
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill(signal);
        await exited;
      },
    };
  };
  const first = await start(firstIndex);
  const rest = await Promise.all(Array.from({ length: count - 1 }, (_, i) => start(firstIndex + i + 1)));
  return [first, ...rest];
}
