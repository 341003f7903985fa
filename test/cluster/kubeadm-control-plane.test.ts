// A control plane installed kubeadm-style, run by real node agents: three machine roots prepared
// as kubeadm (and Cluster API's bootstrap data) leaves them — /etc/kubernetes/pki with one CA, an
// etcd CA and per-machine certificates, static pod manifests with kubeadm's command lines and
// hostPath volumes, the kubelet's unit, config and kubeconfig, kubeadm-flags.env with the
// control-plane label and taint, /etc/bosun/kubernetes-version — and a node agent started on each,
// without any API server running beforehand. The static pods start from the manifests; the three
// etcd members form one cluster over TLS (etcdctl), the three API servers serve it with /version
// the requested version, the real kubectl works against each with an admin client certificate,
// the nodes register there (the third through a bootstrap token, its CSR approved by the
// kube-controller-manager static pod and signed with the cluster CA) with the label, the taint and
// the version, mirror pods carry the static pods' status, their logs reach `kubectl logs`, a
// killed API server process is started again by its agent, and a changed or removed manifest
// restarts or stops its pod and replaces or deletes its mirror pod. Addresses are picked free under 127.0.150.x.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes, webcrypto } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import YAML from 'yaml';
import { createCA, issueClientCert, signPublicKey, type KeyPair } from '../../src/common/pki.js';
import { logger } from '../../src/common/log.js';
import { NodeAgent } from '../../src/cluster/node-agent/agent.js';
import { bosunCommand } from '../../src/cluster/node-agent/runtime.js';
import { scriptCommand } from '../../src/cluster/node-agent/pod-spec.js';
import { bootstrapTokenSecret, generateBootstrapToken } from '../../src/apiserver/nodes/bootstrap-tokens.js';
import type { Instance } from '../../src/cloud/types.js';
import { runKubectl } from '../helpers/apiserver.js';
import { eventually } from '../helpers/eventually.js';
import { freeMachineAddresses, machineLogs, pidsOf, pidsUnder, processes } from '../helpers/machine-roots.js';
import { skipWithoutEtcd } from '../helpers/etcd.js';

const exec = promisify(execFile);
const VERSION = 'v1.33.1';
const ETCD_IMAGE = 'bosun.local/etcd:3.5.21-0';

/** A certificate signed by `ca` with both server and client auth (kubeadm's etcd server and peer certificates). */
async function issueDual(ca: KeyPair, commonName: string, hosts: string[]): Promise<KeyPair> {
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
  const keys = await webcrypto.subtle.generateKey(algorithm, true, ['sign', 'verify']) as webcrypto.CryptoKeyPair;
  const certPem = await signPublicKey(ca, keys.publicKey, {
    subject: `CN=${commonName}`,
    keyUsages: x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
    extendedKeyUsages: [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth],
    altNames: hosts.map((h) => ({ type: /^[\d.]+$|:/.test(h) ? 'ip' as const : 'dns' as const, value: h })),
    notAfter: new Date(Date.now() + 365 * 86_400_000),
  });
  const der = await webcrypto.subtle.exportKey('pkcs8', keys.privateKey);
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${Buffer.from(der).toString('base64').replace(/(.{64})/g, '$1\n').trimEnd()}\n-----END PRIVATE KEY-----\n`;
  return { certPem, keyPem };
}

function write(root: string, path: string, text: string, mode = 0o644): void {
  const file = join(root, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text, { mode });
}

function kubeconfig(server: string, caPem: string, user: Record<string, string>, name = 'kubernetes-admin'): string {
  return YAML.stringify({
    apiVersion: 'v1', kind: 'Config',
    clusters: [{ name: 'kubernetes', cluster: { server, 'certificate-authority-data': Buffer.from(caPem).toString('base64') } }],
    users: [{ name, user }],
    contexts: [{ name: `${name}@kubernetes`, context: { cluster: 'kubernetes', user: name } }],
    'current-context': `${name}@kubernetes`,
  });
}

const certUser = (p: KeyPair) => ({ 'client-certificate-data': Buffer.from(p.certPem).toString('base64'), 'client-key-data': Buffer.from(p.keyPem).toString('base64') });

const hostPath = (name: string, path: string, type: string) => ({ name, hostPath: { path, type } });
const mount = (name: string, mountPath: string, readOnly = false) => ({ name, mountPath, ...(readOnly ? { readOnly } : {}) });
const probe = (host: string, port: number, path: string, scheme: string, o: Record<string, number>) => ({ httpGet: { host, port, path, scheme }, timeoutSeconds: 15, ...o });

/** kubeadm's static pod manifest (phases/controlplane, phases/etcd): a hostNetwork pod in kube-system. */
function staticPod(name: string, component: string, image: string, command: string[], volumes: Array<{ name: string; hostPath: { path: string; type: string } }>, mounts: Array<{ name: string; mountPath: string }>, probes: Record<string, unknown>, annotations: Record<string, string> = {}): string {
  return YAML.stringify({
    apiVersion: 'v1', kind: 'Pod',
    metadata: { annotations, labels: { component, tier: 'control-plane' }, name, namespace: 'kube-system' },
    spec: {
      containers: [{ command, image, imagePullPolicy: 'IfNotPresent', name, resources: { requests: { cpu: '100m' } }, volumeMounts: mounts, ...probes }],
      hostNetwork: true, priority: 2000001000, priorityClassName: 'system-node-critical',
      securityContext: { seccompProfile: { type: 'RuntimeDefault' } },
      volumes,
    },
    status: {},
  });
}

interface Machine { name: string; ip: string; root: string; agent?: NodeAgent; adminKubeconfig: string }

interface Pki { ca: KeyPair; etcdCa: KeyPair; frontProxyCa: KeyPair; saKeyPem: string; saPubPem: string; admin: KeyPair }

/** The machine root as kubeadm leaves a control-plane machine (init on the first, join on the others). */
async function prepareMachine(m: Machine, all: Machine[], pki: Pki, o: { bootstrapToken?: string; controllers: boolean }): Promise<void> {
  const { root, ip, name } = m;
  const p = '/etc/kubernetes/pki';
  write(root, 'etc/machine-id', randomBytes(16).toString('hex'));
  write(root, `${p}/ca.crt`, pki.ca.certPem);
  write(root, `${p}/ca.key`, pki.ca.keyPem, 0o600);
  write(root, `${p}/front-proxy-ca.crt`, pki.frontProxyCa.certPem);
  write(root, `${p}/front-proxy-ca.key`, pki.frontProxyCa.keyPem, 0o600);
  write(root, `${p}/sa.key`, pki.saKeyPem, 0o600);
  write(root, `${p}/sa.pub`, pki.saPubPem);
  write(root, `${p}/etcd/ca.crt`, pki.etcdCa.certPem);
  write(root, `${p}/etcd/ca.key`, pki.etcdCa.keyPem, 0o600);
  const pair = (file: string, kp: KeyPair) => {
    write(root, `${p}/${file}.crt`, kp.certPem);
    write(root, `${p}/${file}.key`, kp.keyPem, 0o600);
  };
  pair('apiserver', await issueDual(pki.ca, 'kube-apiserver', [name, ip, '10.96.0.1', '127.0.0.1', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local']));
  pair('apiserver-kubelet-client', await issueClientCert(pki.ca, { commonName: 'kube-apiserver-kubelet-client', organizations: ['kubeadm:cluster-admins'] }));
  pair('front-proxy-client', await issueClientCert(pki.frontProxyCa, { commonName: 'front-proxy-client' }));
  pair('apiserver-etcd-client', await issueClientCert(pki.etcdCa, { commonName: 'kube-apiserver-etcd-client' }));
  pair('etcd/server', await issueDual(pki.etcdCa, name, [name, ip, 'localhost', '127.0.0.1', '::1']));
  pair('etcd/peer', await issueDual(pki.etcdCa, name, [name, ip, 'localhost', '127.0.0.1', '::1']));
  pair('etcd/healthcheck-client', await issueClientCert(pki.etcdCa, { commonName: 'kube-etcd-healthcheck-client' }));

  const server = `https://${ip}:6443`;
  write(root, 'etc/kubernetes/admin.conf', kubeconfig(server, pki.ca.certPem, certUser(pki.admin)), 0o600);
  write(root, 'etc/kubernetes/controller-manager.conf', kubeconfig(server, pki.ca.certPem, certUser(await issueClientCert(pki.ca, { commonName: 'system:kube-controller-manager' })), 'system:kube-controller-manager'), 0o600);
  write(root, 'etc/kubernetes/scheduler.conf', kubeconfig(server, pki.ca.certPem, certUser(await issueClientCert(pki.ca, { commonName: 'system:kube-scheduler' })), 'system:kube-scheduler'), 0o600);
  if (o.bootstrapToken) {
    write(root, 'etc/kubernetes/bootstrap-kubelet.conf', kubeconfig(server, pki.ca.certPem, { token: o.bootstrapToken }, 'tls-bootstrap-token-user'), 0o600);
  } else {
    write(root, 'etc/kubernetes/kubelet.conf', kubeconfig(server, pki.ca.certPem, certUser(await issueClientCert(pki.ca, { commonName: `system:node:${name}`, organizations: ['system:nodes'] })), `system:node:${name}`), 0o600);
  }
  write(root, 'etc/systemd/system/kubelet.service', `[Unit]\nDescription=kubelet\n[Service]\nExecStart=/usr/bin/kubelet --bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf --config=/var/lib/kubelet/config.yaml\nRestart=always\n`);
  write(root, 'var/lib/kubelet/config.yaml', YAML.stringify({
    apiVersion: 'kubelet.config.k8s.io/v1beta1', kind: 'KubeletConfiguration',
    authentication: { x509: { clientCAFile: `${p}/ca.crt` }, webhook: { enabled: true }, anonymous: { enabled: false } },
    authorization: { mode: 'Webhook' }, cgroupDriver: 'systemd', clusterDNS: ['10.96.0.10'], clusterDomain: 'cluster.local',
    rotateCertificates: true, staticPodPath: '/etc/kubernetes/manifests',
  }));
  write(root, 'var/lib/kubelet/kubeadm-flags.env', 'KUBELET_KUBEADM_ARGS="--node-labels=node-role.kubernetes.io/control-plane=,node.kubernetes.io/exclude-from-external-load-balancers= --register-with-taints=node-role.kubernetes.io/control-plane:NoSchedule"\n');
  write(root, 'etc/bosun/kubernetes-version', `${VERSION}\n`);

  const initialCluster = all.map((x) => `${x.name}=https://${x.ip}:2380`).join(',');
  write(root, 'etc/kubernetes/manifests/etcd.yaml', staticPod('etcd', 'etcd', ETCD_IMAGE, [
    'etcd', `--advertise-client-urls=https://${ip}:2379`, `--cert-file=${p}/etcd/server.crt`, '--client-cert-auth=true', '--data-dir=/var/lib/etcd',
    '--experimental-initial-corrupt-check=true', '--experimental-watch-progress-notify-interval=5s', `--initial-advertise-peer-urls=https://${ip}:2380`,
    `--initial-cluster=${initialCluster}`, '--initial-cluster-state=new', `--key-file=${p}/etcd/server.key`,
    `--listen-client-urls=https://127.0.0.1:2379,https://${ip}:2379`, '--listen-metrics-urls=http://127.0.0.1:2381', `--listen-peer-urls=https://${ip}:2380`,
    `--name=${name}`, `--peer-cert-file=${p}/etcd/peer.crt`, '--peer-client-cert-auth=true', `--peer-key-file=${p}/etcd/peer.key`,
    `--peer-trusted-ca-file=${p}/etcd/ca.crt`, '--snapshot-count=10000', `--trusted-ca-file=${p}/etcd/ca.crt`,
    '--heartbeat-interval=250', '--election-timeout=2500',
  ], [hostPath('etcd-certs', `${p}/etcd`, 'DirectoryOrCreate'), hostPath('etcd-data', '/var/lib/etcd', 'DirectoryOrCreate')],
  [mount('etcd-data', '/var/lib/etcd'), mount('etcd-certs', `${p}/etcd`)], {
    livenessProbe: probe('127.0.0.1', 2381, '/livez', 'HTTP', { failureThreshold: 8, initialDelaySeconds: 10, periodSeconds: 10 }),
    readinessProbe: probe('127.0.0.1', 2381, '/readyz', 'HTTP', { failureThreshold: 3, periodSeconds: 1 }),
    startupProbe: probe('127.0.0.1', 2381, '/readyz', 'HTTP', { failureThreshold: 24, initialDelaySeconds: 10, periodSeconds: 10 }),
  }, { 'kubeadm.kubernetes.io/etcd.advertise-client-urls': `https://${ip}:2379` }));

  const k8sVolumes = [hostPath('ca-certs', '/etc/ssl/certs', 'DirectoryOrCreate'), hostPath('k8s-certs', p, 'DirectoryOrCreate')];
  const k8sMounts = [mount('ca-certs', '/etc/ssl/certs', true), mount('k8s-certs', p, true)];
  write(root, 'etc/kubernetes/manifests/kube-apiserver.yaml', staticPod('kube-apiserver', 'kube-apiserver', `bosun.local/kube-apiserver:${VERSION}`, [
    'kube-apiserver', `--advertise-address=${ip}`, '--allow-privileged=true', '--authorization-mode=Node,RBAC', `--client-ca-file=${p}/ca.crt`,
    '--enable-admission-plugins=NodeRestriction', '--enable-bootstrap-token-auth=true', `--etcd-cafile=${p}/etcd/ca.crt`,
    `--etcd-certfile=${p}/apiserver-etcd-client.crt`, `--etcd-keyfile=${p}/apiserver-etcd-client.key`, '--etcd-servers=https://127.0.0.1:2379',
    `--kubelet-client-certificate=${p}/apiserver-kubelet-client.crt`, `--kubelet-client-key=${p}/apiserver-kubelet-client.key`,
    '--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname', `--proxy-client-cert-file=${p}/front-proxy-client.crt`,
    `--proxy-client-key-file=${p}/front-proxy-client.key`, '--requestheader-allowed-names=front-proxy-client', `--requestheader-client-ca-file=${p}/front-proxy-ca.crt`,
    '--requestheader-extra-headers-prefix=X-Remote-Extra-', '--requestheader-group-headers=X-Remote-Group', '--requestheader-username-headers=X-Remote-User',
    '--secure-port=6443', '--service-account-issuer=https://kubernetes.default.svc.cluster.local', `--service-account-key-file=${p}/sa.pub`,
    `--service-account-signing-key-file=${p}/sa.key`, '--service-cluster-ip-range=10.96.0.0/12', `--tls-cert-file=${p}/apiserver.crt`, `--tls-private-key-file=${p}/apiserver.key`,
  ], k8sVolumes, k8sMounts, {
    livenessProbe: probe(ip, 6443, '/livez', 'HTTPS', { failureThreshold: 8, initialDelaySeconds: 10, periodSeconds: 10 }),
    readinessProbe: probe(ip, 6443, '/readyz', 'HTTPS', { failureThreshold: 3, periodSeconds: 1 }),
    startupProbe: probe(ip, 6443, '/livez', 'HTTPS', { failureThreshold: 24, initialDelaySeconds: 10, periodSeconds: 10 }),
  }, { 'kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint': `${ip}:6443` }));

  if (!o.controllers) return;
  write(root, 'etc/kubernetes/manifests/kube-controller-manager.yaml', staticPod('kube-controller-manager', 'kube-controller-manager', `bosun.local/kube-controller-manager:${VERSION}`, [
    'kube-controller-manager', '--allocate-node-cidrs=true', '--authentication-kubeconfig=/etc/kubernetes/controller-manager.conf',
    '--authorization-kubeconfig=/etc/kubernetes/controller-manager.conf', '--bind-address=127.0.0.1', `--client-ca-file=${p}/ca.crt`,
    '--cluster-cidr=192.168.0.0/16', '--cluster-name=kubernetes', `--cluster-signing-cert-file=${p}/ca.crt`, `--cluster-signing-key-file=${p}/ca.key`,
    '--controllers=*,bootstrapsigner,tokencleaner', '--kubeconfig=/etc/kubernetes/controller-manager.conf', '--leader-elect=true',
    `--requestheader-client-ca-file=${p}/front-proxy-ca.crt`, `--root-ca-file=${p}/ca.crt`, `--service-account-private-key-file=${p}/sa.key`,
    '--service-cluster-ip-range=10.96.0.0/12', '--use-service-account-credentials=true',
  ], [...k8sVolumes, hostPath('kubeconfig', '/etc/kubernetes/controller-manager.conf', 'FileOrCreate')],
  [...k8sMounts, mount('kubeconfig', '/etc/kubernetes/controller-manager.conf', true)], {
    livenessProbe: probe('127.0.0.1', 10257, '/healthz', 'HTTPS', { failureThreshold: 8, initialDelaySeconds: 10, periodSeconds: 10 }),
    startupProbe: probe('127.0.0.1', 10257, '/healthz', 'HTTPS', { failureThreshold: 24, initialDelaySeconds: 10, periodSeconds: 10 }),
  }));
  write(root, 'etc/kubernetes/manifests/kube-scheduler.yaml', staticPod('kube-scheduler', 'kube-scheduler', `bosun.local/kube-scheduler:${VERSION}`, [
    'kube-scheduler', '--authentication-kubeconfig=/etc/kubernetes/scheduler.conf', '--authorization-kubeconfig=/etc/kubernetes/scheduler.conf',
    '--bind-address=127.0.0.1', '--kubeconfig=/etc/kubernetes/scheduler.conf', '--leader-elect=true',
  ], [hostPath('kubeconfig', '/etc/kubernetes/scheduler.conf', 'FileOrCreate')], [mount('kubeconfig', '/etc/kubernetes/scheduler.conf', true)], {
    livenessProbe: probe('127.0.0.1', 10259, '/livez', 'HTTPS', { failureThreshold: 8, initialDelaySeconds: 10, periodSeconds: 10 }),
    readinessProbe: probe('127.0.0.1', 10259, '/readyz', 'HTTPS', { failureThreshold: 3, periodSeconds: 1 }),
    startupProbe: probe('127.0.0.1', 10259, '/livez', 'HTTPS', { failureThreshold: 24, initialDelaySeconds: 10, periodSeconds: 10 }),
  }));
}

/** The last lines of every container log under `dir` (var/log/pods in each machine root), for a failure's report. */
function versionOf(ip: string, caPem: string): Promise<{ gitVersion: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`https://${ip}:6443/version`, { ca: caPem, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => (res.statusCode === 200 ? resolve(JSON.parse(body) as { gitVersion: string }) : reject(new Error(`HTTP ${res.statusCode}: ${body}`))));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

test('three kubeadm control-plane machines run their static pods without an API server, form one TLS etcd and serve the requested version', { skip: skipWithoutEtcd, timeout: 600_000 }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'bosun-kubeadm-'));
  chmodSync(dir, 0o755);
  const ips = await freeMachineAddresses('127.0.150', 3);
  const machines: Machine[] = ips.map((ip, i) => ({ name: `cp-${i + 1}`, ip, root: join(dir, `machine-${i + 1}`, 'root'), adminKubeconfig: join(dir, `machine-${i + 1}`, 'root', 'etc/kubernetes/admin.conf') }));
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pki: Pki = {
    ca: await createCA('kubernetes'), etcdCa: await createCA('etcd-ca'), frontProxyCa: await createCA('front-proxy-ca'),
    saKeyPem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(), saPubPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    admin: { certPem: '', keyPem: '' },
  };
  pki.admin = await issueClientCert(pki.ca, { commonName: 'kubernetes-admin', organizations: ['system:masters'] });
  const token = generateBootstrapToken();
  for (const [i, m] of machines.entries()) await prepareMachine(m, machines, pki, { bootstrapToken: i === 2 ? token : undefined, controllers: true });
  const log = logger('node-agent');
  const etcdctl = (m: Machine, args: string[]) => exec('/usr/bin/etcdctl', [
    `--endpoints=https://${m.ip}:2379`, `--cacert=${join(m.root, 'etc/kubernetes/pki/etcd/ca.crt')}`,
    `--cert=${join(m.root, 'etc/kubernetes/pki/etcd/healthcheck-client.crt')}`, `--key=${join(m.root, 'etc/kubernetes/pki/etcd/healthcheck-client.key')}`,
    '--dial-timeout=3s', '--command-timeout=5s', ...args,
  ], { env: { ...process.env, ETCDCTL_API: '3' } });
  const kubectl = (m: Machine, args: string[]) => runKubectl(m.adminKubeconfig, ['--request-timeout=10s', ...args]);
  try {
    for (const m of machines) {
      const instance: Instance = {
        id: `i-${m.name}`, name: m.name, type: 'local.small', zone: 'local-a', region: 'local', privateIp: m.ip, state: 'running',
        launchTime: new Date().toISOString(), createdAt: new Date().toISOString(), machine: { phase: 'Up', bootCount: 1 },
      };
      m.agent = new NodeAgent({ instance, root: m.root, bootId: randomBytes(16).toString('hex'), firstBoot: true }, {
        componentCommand: bosunCommand, echoCommand: scriptCommand('echo'), log,
        leaseRenewIntervalMs: 2000, nodeStatusUpdateMs: 2000, restartDelayMs: 1000, csrPollMs: 300, staticPodCheckMs: 1000,
        crashBackoffBaseMs: 1000, crashBackoffMaxMs: 5000, apiWaitPollMs: 500, certificateRotationJitter: () => 0.5,
      });
      m.agent.start();
    }

    // etcd: three members, one cluster, TLS with client certificates, data in each machine root.
    await eventually('the three etcd members healthy', async () => {
      for (const m of machines) await etcdctl(m, ['endpoint', 'health']);
      return true;
    }, { timeoutMs: 180_000, intervalMs: 2000 });
    const members = (await etcdctl(machines[0], ['member', 'list', '-w', 'json'])).stdout;
    const list = (JSON.parse(members) as { members: Array<{ name: string; clientURLs: string[] }> }).members;
    assert.deepEqual(list.map((x) => x.name).sort(), ['cp-1', 'cp-2', 'cp-3']);
    assert.ok(list.every((x) => x.clientURLs.every((u) => u.startsWith('https://'))), members);
    for (const m of machines) assert.ok(existsSync(join(m.root, 'var/lib/etcd/member')), `${m.name}'s etcd data is in its machine root`);
    // Without a client certificate etcd lets nobody in.
    await assert.rejects(exec('/usr/bin/etcdctl', [`--endpoints=https://${machines[1].ip}:2379`, `--cacert=${join(machines[1].root, 'etc/kubernetes/pki/etcd/ca.crt')}`, '--dial-timeout=2s', '--command-timeout=3s', 'endpoint', 'health'], { env: { ...process.env, ETCDCTL_API: '3' } }));

    // Three API servers on it, each reporting the requested version.
    for (const m of machines) {
      const version = await eventually(`${m.name}'s API server answering /version`, () => versionOf(m.ip, pki.ca.certPem), { timeoutMs: 180_000, intervalMs: 1000 });
      assert.equal(version.gitVersion, VERSION);
    }
    // The third machine joins with a bootstrap token, as kubeadm join does.
    await eventually('the bootstrap token stored', async () => {
      const secret = await runKubectl(machines[0].adminKubeconfig, ['apply', '--validate=false', '-f', '-'], { input: JSON.stringify(bootstrapTokenSecret(token, { expiration: new Date(Date.now() + 3600_000) })) });
      if (secret.code !== 0) throw new Error(secret.stderr);
      return true;
    }, { timeoutMs: 60_000, intervalMs: 1000 });

    // kubectl with the admin certificate against each server; the nodes registered there.
    for (const m of machines) {
      const v = await kubectl(m, ['version', '-o', 'json']);
      assert.equal(v.code, 0, v.stderr);
      assert.equal(JSON.parse(v.stdout).serverVersion.gitVersion, VERSION);
    }
    const nodes = await eventually('three nodes Ready', async () => {
      const r = await kubectl(machines[1], ['get', 'nodes', '-o', 'json']);
      if (r.code !== 0) throw new Error(r.stderr);
      const items = JSON.parse(r.stdout).items as Array<{ metadata: { name: string; labels: Record<string, string> }; spec: { taints?: Array<{ key: string; effect: string }> }; status: { nodeInfo: { kubeletVersion: string; kubeProxyVersion: string }; conditions: Array<{ type: string; status: string }> } }>;
      const ready = items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length === 3 ? items : false;
    }, { timeoutMs: 180_000, intervalMs: 2000 });
    assert.deepEqual(nodes.map((n) => n.metadata.name).sort(), ['cp-1', 'cp-2', 'cp-3']);
    for (const n of nodes) {
      assert.equal(n.metadata.labels['node-role.kubernetes.io/control-plane'], '', n.metadata.name);
      assert.ok(n.spec.taints?.some((t) => t.key === 'node-role.kubernetes.io/control-plane' && t.effect === 'NoSchedule'), `${n.metadata.name}'s taints: ${JSON.stringify(n.spec.taints)}`);
      assert.equal(n.status.nodeInfo.kubeletVersion, VERSION);
      assert.equal(n.status.nodeInfo.kubeProxyVersion, VERSION);
    }
    // cp-3's credentials came from a CSR sent with the bootstrap token, approved by the
    // kube-controller-manager static pod and signed with the cluster CA.
    const csrs = JSON.parse((await kubectl(machines[2], ['get', 'csr', '-o', 'json'])).stdout).items as Array<{ spec: { username: string }; status: { conditions?: Array<{ type: string; reason: string }>; certificate?: string } }>;
    const joined = csrs.find((c) => c.spec.username.startsWith('system:bootstrap:'));
    assert.ok(joined?.status.conditions?.some((c) => c.type === 'Approved' && c.reason === 'AutoApproved'), JSON.stringify(csrs));
    assert.ok(joined?.status.certificate);
    const issued = new x509.X509Certificate(Buffer.from(joined.status.certificate, 'base64').toString('utf8'));
    assert.equal(issued.issuer, new x509.X509Certificate(pki.ca.certPem).subject);

    // Mirror pods carry the static pods' real status.
    await eventually('the mirror pods Running and Ready', async () => {
      const r = await kubectl(machines[2], ['get', 'pods', '-n', 'kube-system', '-o', 'json']);
      const pods = JSON.parse(r.stdout).items as Array<{ metadata: { name: string; annotations: Record<string, string> }; status: { phase: string; conditions?: Array<{ type: string; status: string }> } }>;
      const names = pods.map((p) => p.metadata.name).sort();
      const wanted = ['etcd', 'kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].flatMap((c) => machines.map((m) => `${c}-${m.name}`));
      if (wanted.some((w) => !names.includes(w))) return false;
      return pods.every((p) => p.metadata.annotations['kubernetes.io/config.mirror'] && p.status.phase === 'Running' && p.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    }, { timeoutMs: 120_000, intervalMs: 2000 });

    // A static pod's logs, through the API server and the node's :10250 (kubeadm's
    // apiserver-kubelet-client certificate is in kubeadm:cluster-admins, which kubeadm init binds).
    const binding = await runKubectl(machines[0].adminKubeconfig, ['create', 'clusterrolebinding', 'kubeadm:cluster-admins', '--clusterrole=cluster-admin', '--group=kubeadm:cluster-admins']);
    assert.equal(binding.code, 0, binding.stderr);
    await eventually('the etcd static pod\'s logs', async () => {
      const r = await kubectl(machines[0], ['logs', '-n', 'kube-system', 'etcd-cp-2']);
      if (r.code !== 0) throw new Error(r.stderr);
      return r.stdout.includes('bosun etcd: data in') && r.stdout.includes('/var/lib/etcd');
    }, { timeoutMs: 30_000, intervalMs: 1000 });

    // An API server's process killed: its agent starts it again.
    const target = machines[1];
    const [pid] = pidsOf('kube-apiserver', `--advertise-address=${target.ip}`);
    assert.ok(pid, 'the kube-apiserver process of cp-2');
    process.kill(pid, 'SIGKILL');
    await eventually('cp-2\'s API server started again', async () => {
      const again = pidsOf('kube-apiserver', `--advertise-address=${target.ip}`);
      if (again.length === 0 || again.includes(pid)) return false;
      return (await versionOf(target.ip, pki.ca.certPem)).gitVersion === VERSION;
    }, { timeoutMs: 120_000, intervalMs: 1000 });
    await eventually('the restart counted in the mirror pod', async () => {
      const r = await kubectl(machines[0], ['get', 'pod', '-n', 'kube-system', 'kube-apiserver-cp-2', '-o', 'jsonpath={.status.containerStatuses[0].restartCount}']);
      return Number(r.stdout) >= 1;
    }, { timeoutMs: 60_000, intervalMs: 1000 });

    // A changed manifest: the pod restarts under its new hash, and its mirror pod is replaced; a
    // removed one: the pod stops and its mirror pod goes.
    const cp3 = machines[2];
    const manifestFile = join(cp3.root, 'etc/kubernetes/manifests/kube-scheduler.yaml');
    const mirrorHash = async () => (await kubectl(machines[0], ['get', 'pod', '-n', 'kube-system', 'kube-scheduler-cp-3', '-o', 'jsonpath={.metadata.annotations.kubernetes\\.io/config\\.mirror}'])).stdout;
    const before = await mirrorHash();
    assert.ok(before);
    const changed = YAML.parse(readFileSync(manifestFile, 'utf8')) as { spec: { containers: Array<{ command: string[] }> } };
    changed.spec.containers[0].command.push('--profiling=false');
    writeFileSync(manifestFile, YAML.stringify(changed));
    await eventually('the changed scheduler running, mirrored under its new hash', async () => {
      const hash = await mirrorHash();
      return hash && hash !== before && pidsUnder(cp3.root).some((pid) => processes().find((x) => x.pid === pid)?.cmdline.includes('--profiling=false'));
    }, { timeoutMs: 60_000, intervalMs: 1000 });
    rmSync(manifestFile);
    await eventually('the removed scheduler stopped and its mirror pod gone', async () => {
      const r = await kubectl(machines[0], ['get', 'pod', '-n', 'kube-system', 'kube-scheduler-cp-3', '-o', 'name']);
      return r.code !== 0 && /NotFound/.test(r.stderr) && !processes().some((x) => x.environ.includes(cp3.root) && x.cmdline.includes('kube-scheduler'));
    }, { timeoutMs: 60_000, intervalMs: 1000 });

    // The agents stop: every static pod's processes with them (etcd included, found by its data directory).
    await Promise.all(machines.map((m) => m.agent?.stop()));
    await eventually('no process of the machines left', () => pidsUnder(dir).length === 0, { timeoutMs: 15_000, intervalMs: 250, detail: () => pidsUnder(dir).join(' ') });
  } catch (e) {
    console.log(machineLogs(dir, { lines: 12 }));
    throw e;
  } finally {
    await Promise.all(machines.map((m) => m.agent?.stop()));
    // Whatever a failure left running, by pid.
    for (const pid of pidsUnder(dir)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone meanwhile
      }
    }
    rmSync(dir, { recursive: true, force: true });
  }
});
