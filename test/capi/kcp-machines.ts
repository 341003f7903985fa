// For the KubeadmControlPlane tests: what a workload cluster's control-plane machines do once they
// boot, played from the test (the node agent's side is tested elsewhere), on the machines' own
// addresses so that the controller finds them as it would real ones:
//   - the workload cluster's API: one embedded API server whose CA is the cluster's (`<cluster>-ca`,
//     so the admin kubeconfig the KCP writes works), reached through each machine's
//     <private IP>:6443 — the address the control-plane load balancer forwards to;
//   - for each machine a Node labelled node-role.kubernetes.io/control-plane and the mirror pods
//     `<component>-<node>` in kube-system, Running and Ready;
//   - for each machine a real etcd member on https://<private IP>:2379 (peers on :2380) with
//     certificates from the cluster's etcd CA (`<cluster>-etcd`): the first starts the cluster, the
//     others join it with `member add` first, as kubeadm's join does; a machine whose instance is
//     gone loses its member process, its forwarder and its Node.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import type * as api from '../../src/api/index.js';
import { startApiServer, type ApiServer } from '../../src/apiserver/server.js';
import { issueCertificate, issueClientCert, type KeyPair } from '../../src/common/pki.js';
import { ETCD_BINARY } from '../../src/cluster/etcd-cluster.js';
import { LABEL, MACHINES } from '../../src/capi/api.js';
import { KubeClient, loadKubeConfig, resources, isNotFound } from '../../src/kube/index.js';
import type { CapiCluster } from './capi-fixture.js';

export const COMPONENTS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler', 'etcd'];

interface Played {
  name: string;
  ip: string;
  forwarder: Server;
  etcd?: ChildProcess;
  etcdArgs?: string[];
  dir: string;
}

const secretPair = (s: api.Secret): KeyPair => ({ certPem: Buffer.from(s.data!['tls.crt'], 'base64').toString(), keyPem: Buffer.from(s.data!['tls.key'], 'base64').toString() });

export class ControlPlaneMachines {
  readonly played = new Map<string, Played>();
  workload!: ApiServer;
  wkube!: KubeClient;
  private etcdCA!: KeyPair;
  private adminCert!: KeyPair;
  private readonly dir = mkdtempSync(join(tmpdir(), 'bosun-kcp-machines-'));
  private stopped = false;
  private loop?: Promise<void>;

  constructor(private readonly c: CapiCluster, private readonly namespace: string, private readonly cluster: string) {}

  /** Starts the workload API (once the cluster's CA and endpoint exist) and the loop that plays each running control-plane machine. */
  async start(endpointHost: string): Promise<void> {
    const ca = secretPair(await this.c.kube.get(resources.secrets, `${this.cluster}-ca`, this.namespace));
    this.etcdCA = secretPair(await this.c.kube.get(resources.secrets, `${this.cluster}-etcd`, this.namespace));
    this.adminCert = await issueClientCert(this.etcdCA, { commonName: 'test-etcd-admin' });
    const dataDir = join(this.dir, 'workload-api');
    mkdirSync(join(dataDir, 'pki'), { recursive: true });
    writeFileSync(join(dataDir, 'pki', 'ca.crt'), ca.certPem);
    writeFileSync(join(dataDir, 'pki', 'ca.key'), ca.keyPem, { mode: 0o600 });
    this.workload = await startApiServer({ dataDir, host: '127.0.0.1', port: 0, logLevel: 'warn', servingNames: [endpointHost] });
    this.wkube = new KubeClient(loadKubeConfig(this.workload.kubeconfigPath));
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.pass();
      } catch (e) {
        if (!this.stopped) console.error(`control-plane machines: ${(e as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 300));
    }
  }

  private async pass(): Promise<void> {
    const instances = await this.c.cloud.client.listInstances();
    const machines = ((await this.c.kube.list(MACHINES, this.namespace)).items ?? []).filter((m) => m.metadata.labels?.[LABEL.controlPlane] !== undefined && m.spec.clusterName === this.cluster);
    const names = new Set(machines.map((m) => m.metadata.name));
    for (const i of instances) {
      if (!names.has(i.name)) continue;
      const up = i.state === 'running' && i.machine.phase === 'Up';
      if (up && !this.played.has(i.name)) await this.play(i.name, i.privateIp);
      if (!up && i.state === 'terminated' && this.played.has(i.name)) await this.unplay(i.name);
    }
    // etcd refuses a member while another added one has not started yet: joins are retried.
    for (const p of this.played.values()) if (!p.etcdArgs) await this.startEtcd(p);
    for (const name of [...this.played.keys()]) if (!instances.some((i) => i.name === name && i.state !== 'terminated')) await this.unplay(name);
  }

  private async play(name: string, ip: string): Promise<void> {
    const forwarder = createServer((sock) => {
      const upstream = connect({ host: '127.0.0.1', port: this.workload.port });
      sock.pipe(upstream).pipe(sock);
      const close = () => { sock.destroy(); upstream.destroy(); };
      sock.on('error', close);
      upstream.on('error', close);
    });
    await new Promise<void>((resolve, reject) => { forwarder.once('error', reject); forwarder.listen(6443, ip, () => resolve()); });
    const p: Played = { name, ip, forwarder, dir: join(this.dir, name) };
    this.played.set(name, p);
    await this.writeNode(name, ip);
  }

  /** The etcd member of machine `p`: a new cluster when it is the first, else `member add` then a start with state existing. */
  private async startEtcd(p: Played): Promise<void> {
    mkdirSync(p.dir, { recursive: true });
    const cert = await issueCertificate(this.etcdCA, { commonName: p.name }, { server: true, client: true, hosts: [p.ip, '127.0.0.1', 'localhost'] });
    const files = { ca: join(p.dir, 'ca.crt'), cert: join(p.dir, 'server.crt'), key: join(p.dir, 'server.key') };
    writeFileSync(files.ca, this.etcdCA.certPem);
    writeFileSync(files.cert, cert.certPem);
    writeFileSync(files.key, cert.keyPem, { mode: 0o600 });
    const peerUrl = `https://${p.ip}:2380`;
    let initialCluster = `${p.name}=${peerUrl}`;
    let state = 'new';
    const others = [...this.played.values()].filter((o) => o !== p && o.etcd);
    if (others.length) {
      const client = this.client(others.map((o) => `https://${o.ip}:2379`));
      try {
        const added = await client.cluster.memberAdd({ peerURLs: [peerUrl] });
        initialCluster = added.members.map((m) => `${m.name || p.name}=${m.peerURLs[0]}`).join(',');
        state = 'existing';
      } finally {
        client.close();
      }
    }
    p.etcdArgs = [
      '--name', p.name, '--data-dir', join(p.dir, 'data'),
      '--listen-client-urls', `https://${p.ip}:2379`, '--advertise-client-urls', `https://${p.ip}:2379`,
      '--listen-peer-urls', peerUrl, '--initial-advertise-peer-urls', peerUrl,
      '--initial-cluster', initialCluster, '--initial-cluster-state', state, '--initial-cluster-token', 'kcp-test',
      '--cert-file', files.cert, '--key-file', files.key, '--client-cert-auth', '--trusted-ca-file', files.ca,
      '--peer-cert-file', files.cert, '--peer-key-file', files.key, '--peer-client-cert-auth', '--peer-trusted-ca-file', files.ca,
      '--heartbeat-interval', '50', '--election-timeout', '500',
    ];
    this.spawnEtcd(p);
  }

  private spawnEtcd(p: Played): void {
    p.etcd = spawn(ETCD_BINARY, p.etcdArgs!, { stdio: 'ignore', env: { ...process.env, ETCD_LOG_LEVEL: 'error' } });
  }

  /** A client of the members at `endpoints` with an etcd-CA client certificate. */
  client(endpoints: string[]): Etcd3 {
    return new Etcd3({ hosts: endpoints, credentials: { rootCertificate: Buffer.from(this.etcdCA.certPem), certChain: Buffer.from(this.adminCert.certPem), privateKey: Buffer.from(this.adminCert.keyPem) }, dialTimeout: 3_000 });
  }

  /** The member names, as the first member that answers says. */
  async memberNames(): Promise<string[]> {
    for (const p of this.played.values()) {
      if (!p.etcd || p.etcd.exitCode !== null) continue;
      const client = this.client([`https://${p.ip}:2379`]);
      try {
        return (await client.cluster.memberList({ linearizable: true })).members.map((m) => m.name).sort();
      } catch {
        // ask the next
      } finally {
        client.close();
      }
    }
    return [];
  }

  /** Stops machine `name`'s etcd member (SIGKILL: a member dying). */
  async killEtcd(name: string): Promise<void> {
    const child = this.played.get(name)?.etcd;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  /** Starts machine `name`'s etcd member again from its data directory. */
  restartEtcd(name: string): void {
    const p = this.played.get(name)!;
    p.etcdArgs = p.etcdArgs!.map((a, i, all) => (all[i - 1] === '--initial-cluster-state' ? 'existing' : a));
    this.spawnEtcd(p);
  }

  private async writeNode(name: string, ip: string): Promise<void> {
    const now = new Date().toISOString();
    await this.wkube.create(resources.nodes, { apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name, 'node-role.kubernetes.io/control-plane': '' } } }).catch((e) => { if (!/exists/.test((e as Error).message)) throw e; });
    await this.wkube.mergePatch(resources.nodes, name, undefined, { status: { conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: '', lastHeartbeatTime: now, lastTransitionTime: now }], addresses: [{ type: 'InternalIP', address: ip }] } }, 'status');
    for (const component of COMPONENTS) await this.writePod(component, name, true);
  }

  /** The mirror pod of `component` on `node`, Running and Ready or not. */
  async writePod(component: string, node: string, ready: boolean): Promise<void> {
    const name = `${component}-${node}`;
    let pod = await this.wkube.read(resources.pods, name, 'kube-system');
    pod ??= await this.wkube.create(resources.pods, {
      apiVersion: 'v1', kind: 'Pod',
      metadata: { name, namespace: 'kube-system', labels: { component, tier: 'control-plane' }, annotations: { 'kubernetes.io/config.mirror': 'test' } },
      spec: { nodeName: node, hostNetwork: true, containers: [{ name: component, image: `bosun.local/${component}:v1.33.1` }] },
    });
    const now = new Date().toISOString();
    await this.wkube.update(resources.pods, {
      ...pod,
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: ready ? 'True' : 'False', lastTransitionTime: now }],
        containerStatuses: [{ name: component, ready, restartCount: ready ? 0 : 3, image: pod.spec!.containers[0].image ?? '', imageID: '', state: ready ? { running: { startedAt: now } } : { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 40s restarting failed container' } } }],
      },
    }, 'status');
  }

  private async unplay(name: string): Promise<void> {
    const p = this.played.get(name);
    if (!p) return;
    this.played.delete(name);
    p.forwarder.close();
    if (p.etcd && p.etcd.exitCode === null && p.etcd.signalCode === null) {
      const exited = new Promise((r) => p.etcd!.once('exit', r));
      p.etcd.kill('SIGKILL');
      await exited;
    }
    for (const component of COMPONENTS) await this.wkube.delete(resources.pods, `${component}-${name}`, 'kube-system').catch((e) => { if (!isNotFound(e)) throw e; });
    await this.wkube.delete(resources.nodes, name).catch((e) => { if (!isNotFound(e)) throw e; });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.loop;
    for (const name of [...this.played.keys()]) await this.unplay(name).catch(() => undefined);
    await this.workload?.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
