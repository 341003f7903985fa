// The highly available control plane of `bosun start --etcd`, on one machine: a local 3-member
// etcd cluster (etcd-cluster.ts, clients over TLS with certificates) and two API servers on it,
// behind the `api` address — a TCP front that hands each connection to the next API server that
// accepts it, as the load balancer in front of OpenShift's API servers does. TLS passes through
// it: both servers serve the same certificate (server 1 gets a copy of server 0's pki). The first
// API server runs in this process (what bring-up reads its CA and token from); the others are
// processes of their own (`bosun apiserver`, apiserver-process.ts), restarted when they die, so
// that killing one leaves the `api` address served.
//
// Layout under the data directory: etcd/ (members, pki), the first API server in the data
// directory itself (pki/, audit.log, kubeconfig pointing at the front), the second in apiserver-1/.
import { cpSync, existsSync, mkdirSync } from 'node:fs';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { join } from 'node:path';
import { startClusterServer, type ClusterServer } from '../apiserver/cluster-server.js';
import { writeKubeconfig } from '../apiserver/serving.js';
import type { ApiServer, ApiServerOptions } from '../apiserver/server.js';
import { startEtcdCluster, type EtcdCluster } from './etcd-cluster.js';
import { SupervisedApiServer } from './apiserver-process.js';
import { freePort } from '../common/listen.js';

/** What each API server gets (host and port are the front's), and how many there are. */
export interface EtcdControlPlaneOptions extends Omit<ApiServerOptions, 'etcd' | 'host' | 'port'> {
  /** The `api` address clients use (port 0: any free port). */
  host: string;
  port: number;
  /** API servers behind the front (default 2). */
  apiServers?: number;
}

export interface EtcdControlPlane extends ClusterServer {
  /** The front: url, port and kubeconfig are the `api` address; the rest is the first server's. */
  server: ApiServer;
  /** The API server in this process. */
  first: ClusterServer;
  /** The others: processes of their own, restarted when they exit. */
  processes: SupervisedApiServer[];
  etcd: EtcdCluster;
}

/** A TCP front on host:port passing each connection to the first of `backends` (in turn) that accepts it. */
async function startFront(host: string, port: number, backends: () => number[]): Promise<Server> {
  let next = 0;
  const open = new Set<Socket>();
  const front = createServer((client) => {
    open.add(client);
    let upstream: Socket | undefined;
    // From the start, not once a backend answers: a client reset while the backends are tried
    // (a server shutting down, a client giving up) is an 'error' nobody else would handle. The
    // 'close' that follows every error takes the upstream with it.
    client.on('error', () => undefined);
    client.once('close', () => {
      open.delete(client);
      upstream?.destroy();
    });
    client.pause();
    const ports = backends();
    const first = next++ % ports.length;
    const tryBackend = (attempt: number) => {
      if (client.destroyed) return;
      if (attempt >= ports.length) return client.destroy();
      const socket: Socket = (upstream = createConnection({ host, port: ports[(first + attempt) % ports.length] }));
      socket.once('error', () => tryBackend(attempt + 1));
      socket.once('connect', () => {
        socket.removeAllListeners('error');
        socket.on('error', () => client.destroy());
        client.pipe(socket).pipe(client);
        client.resume();
      });
    };
    tryBackend(0);
  });
  await new Promise<void>((resolve, reject) => front.once('error', reject).listen(port, host, resolve));
  // Closing the front also ends the connections through it (watches would hold it open).
  const close = front.close.bind(front);
  front.close = (callback) => {
    for (const socket of open) socket.destroy();
    return close(callback);
  };
  return front;
}

export async function startEtcdControlPlane(options: EtcdControlPlaneOptions): Promise<EtcdControlPlane> {
  const { apiServers = 2, ...serverOptions } = options;
  mkdirSync(options.dataDir, { recursive: true });
  const etcd = await startEtcdCluster(join(options.dataDir, 'etcd'), { tls: true });
  let first: ClusterServer | undefined;
  const processes: SupervisedApiServer[] = [];
  const ports: number[] = [];
  let front: Server | undefined;
  const stopAll = async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await first?.stop();
    await etcd.stop();
  };
  try {
    const storage = { ...etcd.client, prefix: '/registry' };
    const dirs = Array.from({ length: apiServers }, (_, i) => (i === 0 ? options.dataDir : join(options.dataDir, `apiserver-${i}`)));
    // The front first: the servers advertise it as the `kubernetes` Service's endpoint (a
    // connection before any server is up is closed).
    front = await startFront(options.host, options.port, () => ports);
    const port = (front.address() as { port: number }).port;
    first = await startClusterServer({ ...serverOptions, dataDir: dirs[0], host: options.host, port: 0, etcd: storage, advertise: { address: options.host, port } });
    ports.push(first.server.port);
    for (const [i, dataDir] of dirs.entries()) {
      if (i === 0) continue;
      // Every server behind the front presents the same certificate and knows the same tokens.
      if (!existsSync(join(dataDir, 'pki'))) cpSync(join(dirs[0], 'pki'), join(dataDir, 'pki'), { recursive: true });
      const own = await freePort(options.host);
      const etcdFlags = [`--etcd-servers=${storage.endpoints.join(',')}`, ...(storage.caFile ? [`--etcd-cafile=${storage.caFile}`] : []), ...(storage.certFile ? [`--etcd-certfile=${storage.certFile}`, `--etcd-keyfile=${storage.keyFile}`] : [])];
      const supervised = new SupervisedApiServer(`apiserver-${i}`, [
        '--data-dir', dataDir, '--listen', `${options.host}:${own}`, '--advertise', `${options.host}:${port}`, ...etcdFlags,
        ...(serverOptions.serviceClusterIPRange ? ['--service-cluster-ip-range', serverOptions.serviceClusterIPRange] : []),
      ], serverOptions.logLevel ? { BOSUN_LOG_LEVEL: serverOptions.logLevel } : {});
      processes.push(supervised);
      await supervised.start();
      ports.push(own);
    }
    const url = `https://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
    const kubeconfigPath = join(options.dataDir, 'kubeconfig');
    writeKubeconfig(kubeconfigPath, url, first.server.caPem, first.server.token);
    const closing = front;
    return {
      server: { ...first.server, url, port, host: options.host, kubeconfigPath },
      first,
      processes,
      etcd,
      async stop() {
        await new Promise((r) => closing.close(r));
        await stopAll();
      },
    };
  } catch (e) {
    front?.close();
    await stopAll();
    throw e;
  }
}
