// The local cloud as a running service: the instances (cloud.ts), the network objects
// (network.ts) and the HTTP API on a loopback address, with the endpoint file written for clients.
import type { FastifyInstance } from 'fastify';
import { buildCloudApi } from './api.js';
import { LocalCloud, type CloudOptions } from './cloud.js';
import { removeEndpoint, writeEndpoint } from './endpoint.js';
import { Network } from './network.js';

export interface ServeOptions extends CloudOptions {
  host?: string;
  /** 0: a free port. */
  port?: number;
}

export class CloudService {
  readonly cloud: LocalCloud;
  readonly network: Network;
  private readonly app: FastifyInstance;
  url = '';

  constructor(private readonly opts: ServeOptions) {
    this.cloud = new LocalCloud(opts);
    this.network = new Network(this.cloud.store);
    this.app = buildCloudApi(this.cloud, this.network);
  }

  async start(): Promise<string> {
    const host = this.opts.host ?? '127.0.0.1';
    if (!isLoopback(host)) throw new Error(`the local cloud listens on loopback only; ${host} is not a loopback address`);
    this.cloud.recover();
    await this.app.listen({ host, port: this.opts.port ?? 0 });
    const address = this.app.server.address();
    const port = typeof address === 'object' && address ? address.port : this.opts.port;
    this.url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
    writeEndpoint(this.opts.dataDir, { url: this.url, pid: process.pid });
    return this.url;
  }

  async close(): Promise<void> {
    removeEndpoint(this.opts.dataDir, process.pid);
    await this.app.close();
    await this.cloud.close();
  }
}

function isLoopback(host: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host) || host === '::1' || host === 'localhost';
}
