// Shared fixture for machine-config server tests: a temp directory of rendered MachineConfigs,
// a generated CA and serving certificate, a server on random ports, and a small HTTP(S) client.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { FileRenderedConfigSource } from '../../src/mco/server/rendered-config-source.js';
import { MachineConfigServer } from '../../src/mco/server/server.js';
import { generateCa, issueServingCert } from '../../src/mco/server/serving-tls.js';
import type { IgnitionConfig } from '../../src/ignition/types.js';

export const workerConfig: IgnitionConfig = {
  ignition: { version: '3.2.0' },
  storage: {
    files: [
      { path: '/etc/hello.conf', mode: 420, overwrite: true, contents: { source: 'data:,hello%20world%0A' } },
      { path: '/etc/secret.conf', mode: 384, overwrite: true, contents: { source: 'data:;base64,c2VjcmV0Cg==' } },
    ],
    directories: [{ path: '/etc/bosun.d', mode: 493 }],
    links: [{ path: '/etc/hello-link', target: '/etc/hello.conf', overwrite: true }],
  },
  systemd: {
    units: [
      { name: 'hello.service', enabled: true, contents: '[Unit]\nDescription=hello\n[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n' },
      { name: 'kubelet.service', dropins: [{ name: '10-bosun.conf', contents: '[Service]\nEnvironment=BOSUN=1\n' }] },
    ],
  },
};

export const masterConfig: IgnitionConfig = {
  ignition: { version: '3.4.0' },
  kernelArguments: { shouldExist: ['nosmt'] },
};

export const BOOTSTRAP_KUBECONFIG = 'apiVersion: v1\nkind: Config\nclusters: []\n';

export interface Fixture {
  dir: string;
  ca: string;
  server: MachineConfigServer;
  source: FileRenderedConfigSource;
  close(): Promise<void>;
}

export function writeRendered(dir: string, pool: string, name: string, config: IgnitionConfig): void {
  writeFileSync(join(dir, `${pool}.json`), JSON.stringify({
    apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', metadata: { name }, spec: { config },
  }));
}

export async function startFixture(): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-mcs-'));
  writeRendered(dir, 'worker', 'rendered-worker-1', workerConfig);
  writeRendered(dir, 'master', 'rendered-master-1', masterConfig);
  const ca = await generateCa();
  const tls = await issueServingCert(ca, ['localhost', '127.0.0.1']);
  const source = new FileRenderedConfigSource(dir);
  const server = new MachineConfigServer({
    source, tls, bootstrapKubeconfig: BOOTSTRAP_KUBECONFIG,
    listenTls: { host: '127.0.0.1', port: 0 }, listenHttp: { host: '127.0.0.1', port: 0 },
  });
  await server.start();
  return {
    dir, ca: ca.cert, server, source,
    async close() { await server.close(); rmSync(dir, { recursive: true, force: true }); },
  };
}

export interface Reply { status: number; headers: Record<string, string | string[] | undefined>; body: string; alpn?: string | false; protocol?: string | null }

export function get(f: Fixture, listener: 'tls' | 'http', path: string, opts: { method?: string; accept?: string } = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const common = { host: '127.0.0.1', port: f.server.port(listener), path, method: opts.method ?? 'GET', headers: opts.accept ? { accept: opts.accept } : {}, agent: false as const };
    const req = listener === 'tls' ? httpsRequest({ ...common, ca: f.ca }) : httpRequest(common);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const sock = res.socket as unknown as { alpnProtocol?: string | false; getProtocol?: () => string | null };
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString(), alpn: sock.alpnProtocol, protocol: sock.getProtocol?.() });
      });
    });
    req.on('error', reject);
    req.setTimeout(10_000, () => req.destroy(new Error('timeout')));
    req.end();
  });
}
