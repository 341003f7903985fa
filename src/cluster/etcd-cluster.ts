// A local etcd cluster on loopback, run from Debian's etcd binary (package etcd-server): N
// members (3 by default), each its own process with its own data directory under one parent, on
// ports picked free at the first start and kept (members.json) for the next ones. It is what
// `bosun start --etcd` puts under its API servers, and what the etcd storage tests and
// bench:apiserver --storage etcd run against.
//
// Members can be stopped (SIGKILL, like a machine dying) and restarted from their data
// directories, where they rejoin the cluster they belonged to. With `tls`, clients must present a
// certificate signed by the cluster's CA (written to <dataDir>/pki), as kube-apiserver's etcd does.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { etcdClient } from '../apiserver/storage/etcd.js';
import { createCA, issueClientCert, issueServingCert } from '../common/pki.js';
import { freePort } from '../common/listen.js';

export const ETCD_BINARY = process.env.BOSUN_ETCD_BINARY ?? '/usr/bin/etcd';

export interface EtcdClusterOptions {
  /** Members (default 3). */
  members?: number;
  /** Loopback address to bind (default 127.0.0.1). */
  host?: string;
  /** Serve clients over TLS and require client certificates (default false). */
  tls?: boolean;
  /** Fast elections (heartbeat 50 ms, election timeout 500 ms) for tests; default etcd's own (100/1000). */
  fastElections?: boolean;
  /** How long start() waits for the cluster to be healthy (default 30 s). */
  timeoutMs?: number;
}

/** Where a client finds the cluster: endpoints and, with TLS, its CA and a client certificate. */
export interface EtcdClientConfig {
  endpoints: string[];
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

interface Member {
  name: string;
  dataDir: string;
  clientUrl: string;
  peerUrl: string;
  process?: ChildProcess;
  output: string;
}


export class EtcdCluster {
  private readonly members: Member[] = [];
  private stopped = false;
  client!: EtcdClientConfig;

  constructor(
    private readonly dataDir: string,
    private readonly options: EtcdClusterOptions = {},
  ) {}

  /** Starts every member and resolves with the client endpoints once the cluster is healthy. */
  async start(): Promise<EtcdClientConfig> {
    if (!existsSync(ETCD_BINARY)) throw new Error(`${ETCD_BINARY} not found: install Debian's etcd-server (apt-get install etcd-server)`);
    const host = this.options.host ?? '127.0.0.1';
    const scheme = this.options.tls ? 'https' : 'http';
    const count = this.options.members ?? 3;
    mkdirSync(this.dataDir, { recursive: true });
    // A member's peer URL is part of the cluster's membership, kept in its data directory: a
    // cluster started again from its data directory must come back on the same addresses.
    const layoutPath = join(this.dataDir, 'members.json');
    const saved: Array<Pick<Member, 'name' | 'clientUrl' | 'peerUrl'>> | undefined = existsSync(layoutPath) ? JSON.parse(readFileSync(layoutPath, 'utf8')) : undefined;
    if (saved && (saved.length !== count || !saved.every((m) => m.clientUrl.startsWith(`${scheme}://`)))) {
      throw new Error(`${this.dataDir} holds a ${saved.length}-member etcd cluster (${saved[0]?.clientUrl.split(':')[0]}); it cannot be started as ${count} members over ${scheme}`);
    }
    for (let i = 0; i < count; i++) {
      this.members.push({
        name: `etcd-${i}`,
        dataDir: join(resolve(this.dataDir), `etcd-${i}`),
        clientUrl: saved?.[i].clientUrl ?? `${scheme}://${host}:${await freePort(host)}`,
        peerUrl: saved?.[i].peerUrl ?? `http://${host}:${await freePort(host)}`,
        output: '',
      });
    }
    if (!saved) writeFileSync(layoutPath, JSON.stringify(this.members.map(({ name, clientUrl, peerUrl }) => ({ name, clientUrl, peerUrl })), null, 2) + '\n');
    this.client = { endpoints: this.members.map((m) => m.clientUrl) };
    if (this.options.tls) this.client = { ...this.client, ...(await this.writePki(host)) };
    for (let i = 0; i < count; i++) this.startMember(i);
    await this.waitHealthy(this.options.timeoutMs ?? 30_000);
    return this.client;
  }

  private async writePki(host: string): Promise<Omit<EtcdClientConfig, 'endpoints'>> {
    const dir = join(resolve(this.dataDir), 'pki');
    const files = { caFile: join(dir, 'ca.crt'), servingCert: join(dir, 'server.crt'), servingKey: join(dir, 'server.key'), certFile: join(dir, 'client.crt'), keyFile: join(dir, 'client.key') };
    if (Object.values(files).every((f) => existsSync(f))) return { caFile: files.caFile, certFile: files.certFile, keyFile: files.keyFile };
    mkdirSync(dir, { recursive: true });
    const ca = await createCA('bosun-etcd-ca');
    const serving = await issueServingCert(ca, 'etcd', [host, 'localhost']);
    const client = await issueClientCert(ca, { commonName: 'bosun-apiserver' });
    writeFileSync(files.caFile, ca.certPem);
    writeFileSync(files.servingCert, serving.certPem);
    writeFileSync(files.servingKey, serving.keyPem, { mode: 0o600 });
    writeFileSync(files.certFile, client.certPem);
    writeFileSync(files.keyFile, client.keyPem, { mode: 0o600 });
    return { caFile: files.caFile, certFile: files.certFile, keyFile: files.keyFile };
  }

  /** Starts member `index` (again): a member with a data directory rejoins its cluster from it. */
  startMember(index: number): void {
    const member = this.members[index];
    const pki = join(resolve(this.dataDir), 'pki');
    const args = [
      '--name', member.name,
      '--data-dir', member.dataDir,
      '--listen-client-urls', member.clientUrl,
      '--advertise-client-urls', member.clientUrl,
      '--listen-peer-urls', member.peerUrl,
      '--initial-advertise-peer-urls', member.peerUrl,
      '--initial-cluster', this.members.map((m) => `${m.name}=${m.peerUrl}`).join(','),
      '--initial-cluster-state', 'new',
      '--initial-cluster-token', 'bosun-etcd',
      // Anything the API server accepts (bodies up to 3 MiB) fits in one etcd request.
      '--max-request-bytes', String(4 * 1024 * 1024),
      ...(this.options.fastElections ? ['--heartbeat-interval', '50', '--election-timeout', '500'] : []),
      ...(this.options.tls ? ['--cert-file', join(pki, 'server.crt'), '--key-file', join(pki, 'server.key'), '--client-cert-auth', '--trusted-ca-file', join(pki, 'ca.crt')] : []),
    ];
    stopLeftover(member.dataDir);
    const child = spawn(ETCD_BINARY, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ETCD_LOGGER: 'zap', ETCD_LOG_LEVEL: 'warn' } });
    if (child.pid) writeFileSync(`${member.dataDir}.pid`, String(child.pid));
    member.output = '';
    child.stderr!.on('data', (d: Buffer) => {
      member.output = (member.output + d.toString()).slice(-4000);
    });
    child.once('exit', () => {
      if (member.process === child) member.process = undefined;
    });
    member.process = child;
  }

  /** Kills member `index` with SIGKILL (a machine dying) and waits until it is gone. */
  async killMember(index: number): Promise<void> {
    const child = this.members[index].process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  /** The members' process ids (undefined for a stopped member). */
  pids(): Array<number | undefined> {
    return this.members.map((m) => m.process?.pid);
  }

  /** The index of the member that leads, as the members that answer say. */
  async leader(): Promise<number> {
    for (const member of this.members) {
      if (!member.process) continue;
      const client = this.connect([member.clientUrl]);
      try {
        const status = await client.maintenance.status();
        if (status.leader !== '0') {
          const leaderUrl = (await client.cluster.memberList({})).members.find((m) => m.ID === status.leader)?.clientURLs[0];
          const index = this.members.findIndex((m) => m.clientUrl === leaderUrl);
          if (index >= 0) return index;
        }
      } catch {
        // this member does not answer; ask the next
      } finally {
        client.close();
      }
    }
    throw new Error('no etcd member knows a leader');
  }

  /** A client of the given endpoints (default: all) with this cluster's TLS material. */
  connect(endpoints = this.client.endpoints): Etcd3 {
    return etcdClient({ ...this.client, endpoints }, 2_000);
  }

  /** Resolves once every running member answers and the cluster has a leader. */
  async waitHealthy(timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const running = this.members.filter((m) => m.process);
      const answers = await Promise.all(
        running.map(async (m) => {
          const client = this.connect([m.clientUrl]);
          try {
            const status = await client.maintenance.status();
            return status.leader !== '0';
          } catch {
            return false;
          } finally {
            client.close();
          }
        }),
      );
      if (running.length > 0 && answers.every(Boolean)) return;
      const dead = this.members.find((m) => m.process === undefined && m.output && !this.stopped);
      if (Date.now() > deadline) {
        throw new Error(`etcd did not become healthy within ${timeoutMs} ms${dead ? `; ${dead.name} exited: ${dead.output}` : ''}\n${running.map((m) => `${m.name}: ${m.output.slice(-600)}`).join('\n')}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Stops every member (SIGTERM, then SIGKILL after 5 s). */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(
      this.members.map(async (m) => {
        const child = m.process;
        if (!child || child.exitCode !== null) return;
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }
}

/**
 * A member left running by a process that was killed (SIGKILL leaves no chance to stop children):
 * its pid file names it, and it is stopped before a new one starts on the same data directory —
 * only when that process really is an etcd on that directory (a pid may have been reused).
 */
function stopLeftover(memberDataDir: string): void {
  let pid: number;
  try {
    pid = Number(readFileSync(`${memberDataDir}.pid`, 'utf8'));
  } catch {
    return;
  }
  let cmdline = '';
  try {
    cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return;
  }
  if (!cmdline.includes('etcd') || !cmdline.split('\0').includes(memberDataDir)) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return;
  }
  // Its ports and data directory lock are free once it is gone. A zombie holds nothing — once all
  // of it is: etcd is a Go program of many threads, and its leader can show Z while the others are
  // still exiting, holding the file table (and so the listening sockets) until the last one goes
  // (a new member then failed once with "bind: address already in use").
  const deadline = Date.now() + 5_000;
  const alive = () => {
    try {
      if (!/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'))) return true;
      return readdirSync(`/proc/${pid}/task`).length > 1;
    } catch {
      return false;
    }
  };
  while (alive() && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
}

/** Starts a local etcd cluster in `dataDir`; resolves once healthy. */
export async function startEtcdCluster(dataDir: string, options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  const cluster = new EtcdCluster(dataDir, options);
  try {
    await cluster.start();
  } catch (e) {
    await cluster.stop();
    throw e;
  }
  return cluster;
}
