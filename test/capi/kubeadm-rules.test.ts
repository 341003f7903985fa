// The kubeadm providers' pure rules: the webhooks' defaulting and validation (field paths as
// Kubernetes prints them), the Kubernetes versions, the cluster's certificate and kubeconfig
// Secrets (names, keys, type, label, certificate fields), and the kubelet flags kubeadm decides.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { parse as parseYaml } from 'yaml';
import type * as api from '../../src/api/index.js';
import {
  defaultKubeadmConfig, defaultKubeadmConfigTemplate, defaultKubeadmControlPlane,
  validateKubeadmConfig, validateKubeadmConfigTemplate, validateKubeadmControlPlane,
} from '../../src/capi/kubeadm/validation.js';
import { KUBERNETES_VERSIONS, findKubernetesVersion, unknownVersionMessage } from '../../src/capi/kubeadm/versions.js';
import {
  ADMIN_SUBJECT, adminKubeconfig, certificateSecret, clusterSecretName, generateCertificate, kubeadmLeafCertificates, kubeconfigSecret,
} from '../../src/capi/kubeadm/certificates.js';
import { kubeadmFlags, registerTaints } from '../../src/capi/kubeadm/bootstrap-ignition.js';
import { mergeArgs } from '../../src/capi/kubeadm/static-pods.js';

const kcp = (spec: Partial<api.KubeadmControlPlane['spec']> = {}): api.KubeadmControlPlane => ({
  apiVersion: 'controlplane.cluster.x-k8s.io/v1beta2', kind: 'KubeadmControlPlane', metadata: { name: 'dev-control-plane', namespace: 'default' },
  spec: { version: 'v1.33.1', machineTemplate: { spec: { infrastructureRef: { apiGroup: 'infrastructure.cluster.x-k8s.io', kind: 'LocalMachineTemplate', name: 'dev-control-plane' } } }, ...spec },
});

test('KubeadmControlPlane defaults as Cluster API\'s webhook: replicas 1, a v before the version, RollingUpdate with maxSurge 1, remediation, format ignition', () => {
  const d = defaultKubeadmControlPlane(kcp({ version: '1.33.1' }));
  assert.equal(d.spec.replicas, 1);
  assert.equal(d.spec.version, 'v1.33.1');
  assert.deepEqual(d.spec.rollout, { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1 } } });
  assert.equal(d.spec.remediation?.minHealthyPeriodSeconds, 3600);
  assert.equal(d.spec.kubeadmConfigSpec?.format, 'ignition');
  assert.deepEqual(validateKubeadmControlPlane(d), []);
  // What the user set stays.
  const kept = defaultKubeadmControlPlane(kcp({ replicas: 3, rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0 } } }, remediation: { minHealthyPeriodSeconds: 60 } }));
  assert.equal(kept.spec.rollout?.strategy?.rollingUpdate?.maxSurge, 0);
  assert.equal(kept.spec.remediation?.minHealthyPeriodSeconds, 60);
  assert.deepEqual(validateKubeadmControlPlane(kept), []);
});

const cases: Array<[string, Partial<api.KubeadmControlPlane['spec']>, string[]]> = [
  ['even replicas with stacked etcd', { replicas: 2 }, ['spec.replicas: Forbidden: cannot be an even number when etcd is stacked']],
  ['even replicas with external etcd are fine', { replicas: 2, kubeadmConfigSpec: { clusterConfiguration: { etcd: { external: { endpoints: ['https://etcd:2379'], caFile: '/a', certFile: '/b', keyFile: '/c' } } } } }, []],
  ['zero replicas', { replicas: 0 }, ['spec.replicas: Forbidden: cannot be less than or equal to 0', 'spec.replicas: Forbidden: cannot be an even number when etcd is stacked']],
  ['maxSurge 0 with 1 replica', { replicas: 1, rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 0 } } } }, ['spec.rollout.strategy.rollingUpdate: Required value: when KubeadmControlPlane is configured to scale-in, replica count needs to be at least 3']],
  ['maxSurge 2', { replicas: 3, rollout: { strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 2 as 1 } } } }, ['spec.rollout.strategy.rollingUpdate.maxSurge: Required value: value must be 1 or 0']],
  ['a version without v', { replicas: 1, version: '1.33.1' }, ['spec.version: Invalid value: "1.33.1": must start with v']],
  ['a version that is no version', { replicas: 1, version: 'vlatest' }, ['spec.version: Invalid value: "vlatest": must be a valid semantic version']],
  ['cloud-config', { replicas: 1, kubeadmConfigSpec: { format: 'cloud-config' } }, ['spec.kubeadmConfigSpec.format: Unsupported value: "cloud-config": supported values: "ignition" (bosun\'s machines boot from Ignition; leave format unset or set it to "ignition")']],
  ['both local and external etcd', { replicas: 1, kubeadmConfigSpec: { clusterConfiguration: { etcd: { local: { dataDir: '/x' }, external: { endpoints: ['https://e:2379'], caFile: '/a', certFile: '/b', keyFile: '/c' } } } } }, ['spec.kubeadmConfigSpec.clusterConfiguration.etcd.local: Forbidden: cannot have both external and local etcd']],
];
for (const [name, spec, errors] of cases) {
  test(`KubeadmControlPlane validation: ${name}`, () => {
    assert.deepEqual(validateKubeadmControlPlane(kcp(spec)), errors);
  });
}

test('KubeadmControlPlane validation on update: local and external etcd cannot be swapped', () => {
  const old = kcp({ replicas: 1 });
  const updated = kcp({ replicas: 1, kubeadmConfigSpec: { clusterConfiguration: { etcd: { external: { endpoints: ['https://e:2379'], caFile: '/a', certFile: '/b', keyFile: '/c' } } } } });
  assert.deepEqual(validateKubeadmControlPlane(updated, old), ['spec.kubeadmConfigSpec.clusterConfiguration.etcd.external: Forbidden: cannot change between external and local etcd']);
});

test('a KubeadmConfigTemplate without a spec is valid and stays without one; a KubeadmConfig defaults to Ignition', () => {
  const template: api.KubeadmConfigTemplate = { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfigTemplate', metadata: { name: 'md-0' } };
  assert.deepEqual(defaultKubeadmConfigTemplate(template), template);
  assert.deepEqual(validateKubeadmConfigTemplate(template), []);
  const config: api.KubeadmConfig = { apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfig', metadata: { name: 'm' } };
  assert.equal(defaultKubeadmConfig(config).spec?.format, 'ignition');
  assert.deepEqual(validateKubeadmConfig(defaultKubeadmConfig(config)), []);
});

test('KubeadmConfig validation: two sources for a file or a password, a repeated path, what Ignition cannot do', () => {
  const config: api.KubeadmConfig = {
    apiVersion: 'bootstrap.cluster.x-k8s.io/v1beta2', kind: 'KubeadmConfig', metadata: { name: 'm' },
    spec: {
      files: [
        { path: '/etc/a', content: 'x', contentFrom: { secret: { name: 's', key: 'k' } } },
        { path: '/etc/a', content: 'y', encoding: 'gzip' },
      ],
      users: [{ name: 'core', passwd: 'h', passwdFrom: { secret: { name: 's', key: 'k' } }, inactive: true }],
      bootCommands: ['echo'],
    },
  };
  assert.deepEqual(validateKubeadmConfig(config), [
    'spec.files[0]: Invalid value: {"path":"/etc/a","content":"x","contentFrom":{"secret":{"name":"s","key":"k"}}}: only one of content or contentFrom may be specified for a single file',
    'spec.files[1].path: Invalid value: {"path":"/etc/a","content":"y","encoding":"gzip"}: path property must be unique among all files',
    'spec.users[0]: Invalid value: {"name":"core","passwd":"h","passwdFrom":{"secret":{"name":"s","key":"k"}},"inactive":true}: only one of passwd or passwdFrom may be specified for a single user',
    'spec.users[0].inactive: Forbidden: not supported when spec.format is set to: "ignition"',
    'spec.files[1].encoding: Forbidden: not supported when spec.format is set to: "ignition"',
    'spec.bootCommands: Forbidden: not supported when spec.format is set to: "ignition"',
  ]);
});

test('the Kubernetes versions: at least two, each with its etcd; an unknown one says which are known', () => {
  assert.ok(KUBERNETES_VERSIONS.length >= 2);
  assert.deepEqual(KUBERNETES_VERSIONS.map((v) => v.version), ['v1.32.5', 'v1.33.1']);
  assert.equal(findKubernetesVersion('1.33.1')?.etcd, '3.5.21-0');
  assert.equal(findKubernetesVersion('v1.31.0'), undefined);
  assert.match(unknownVersionMessage('v1.31.0'), /"v1\.31\.0" cannot be installed by bosun; supported versions: v1\.32\.5, v1\.33\.1/);
});

test('certificate Secrets: <cluster>-ca/-etcd/-proxy/-sa with tls.crt and tls.key, type cluster.x-k8s.io/secret, the cluster-name label', async () => {
  const cluster = { name: 'dev', namespace: 'default' };
  for (const [purpose, cn] of [['ca', 'kubernetes'], ['etcd', 'etcd-ca'], ['proxy', 'front-proxy-ca']] as const) {
    const material = await generateCertificate(purpose);
    const secret = certificateSecret(cluster, purpose, material);
    assert.equal(secret.metadata.name, `dev-${purpose}`);
    assert.equal(secret.type, 'cluster.x-k8s.io/secret');
    assert.deepEqual(secret.metadata.labels, { 'cluster.x-k8s.io/cluster-name': 'dev' });
    assert.deepEqual(Object.keys(secret.data ?? {}).sort(), ['tls.crt', 'tls.key']);
    const cert = new x509.X509Certificate(Buffer.from(secret.data!['tls.crt'], 'base64').toString());
    assert.equal(cert.subject, `CN=${cn}`);
    assert.ok(cert.getExtension(x509.BasicConstraintsExtension)?.ca, `${purpose} is a CA`);
  }
  const sa = certificateSecret(cluster, 'sa', await generateCertificate('sa'));
  assert.equal(sa.metadata.name, 'dev-sa');
  assert.match(Buffer.from(sa.data!['tls.crt'], 'base64').toString(), /^-----BEGIN PUBLIC KEY-----/);
  assert.match(Buffer.from(sa.data!['tls.key'], 'base64').toString(), /^-----BEGIN PRIVATE KEY-----/);
  assert.equal(clusterSecretName('dev', 'kubeconfig'), 'dev-kubeconfig');
});

test('the kubeconfig Secret: value holds user <cluster>-admin, context <cluster>-admin@<cluster>, a one-year kubernetes-admin/system:masters certificate', async () => {
  const ca = await generateCertificate('ca');
  const secret = kubeconfigSecret({ name: 'dev', namespace: 'default' }, await adminKubeconfig('dev', 'https://127.0.200.3:6443', ca));
  assert.equal(secret.metadata.name, 'dev-kubeconfig');
  assert.equal(secret.type, 'cluster.x-k8s.io/secret');
  assert.deepEqual(secret.metadata.labels, { 'cluster.x-k8s.io/cluster-name': 'dev' });
  assert.deepEqual(Object.keys(secret.data ?? {}), ['value']);
  const kc = parseYaml(Buffer.from(secret.data!.value, 'base64').toString());
  assert.equal(kc['current-context'], 'dev-admin@dev');
  assert.deepEqual(kc.contexts, [{ name: 'dev-admin@dev', context: { cluster: 'dev', user: 'dev-admin' } }]);
  assert.equal(kc.clusters[0].name, 'dev');
  assert.equal(kc.clusters[0].cluster.server, 'https://127.0.200.3:6443');
  assert.equal(Buffer.from(kc.clusters[0].cluster['certificate-authority-data'], 'base64').toString(), ca.certPem);
  assert.equal(kc.users[0].name, 'dev-admin');
  const cert = new x509.X509Certificate(Buffer.from(kc.users[0].user['client-certificate-data'], 'base64').toString());
  assert.equal(cert.subject, `CN=${ADMIN_SUBJECT.commonName}, O=system:masters`);
  assert.equal(cert.issuer, 'CN=kubernetes');
  const days = (cert.notAfter.getTime() - Date.now()) / 86_400_000;
  assert.ok(days > 364 && days <= 365, `valid for a year (${days} days)`);
});

test('kubeadm-flags.env: the control-plane label and taint on control-plane machines, nothing on workers, the spec\'s taints and extra args', () => {
  assert.equal(kubeadmFlags('init', {}), 'KUBELET_KUBEADM_ARGS="--node-labels=node-role.kubernetes.io/control-plane= --register-with-taints=node-role.kubernetes.io/control-plane:NoSchedule"\n');
  assert.equal(kubeadmFlags('join-control-plane', {}), kubeadmFlags('init', {}));
  assert.equal(kubeadmFlags('join-worker', {}), 'KUBELET_KUBEADM_ARGS=""\n');
  assert.deepEqual(registerTaints('init', { initConfiguration: { nodeRegistration: { taints: [] } } }), []);
  assert.equal(
    kubeadmFlags('join-worker', { joinConfiguration: { nodeRegistration: { taints: [{ key: 'gpu', value: 'yes', effect: 'NoExecute' }], kubeletExtraArgs: [{ name: 'node-labels', value: 'pool=a' }, { name: 'v', value: '4' }] } } }),
    'KUBELET_KUBEADM_ARGS="--node-labels=pool=a --register-with-taints=gpu=yes:NoExecute --v=4"\n',
  );
});

test('extraArgs replace kubeadm\'s flag of the same name and add new ones, sorted as kubeadm writes them', () => {
  assert.deepEqual(mergeArgs({ 'secure-port': '6443', 'authorization-mode': 'Node,RBAC' }, [{ name: 'secure-port', value: '7443' }, { name: 'audit-log-path', value: '-' }]), [
    '--audit-log-path=-', '--authorization-mode=Node,RBAC', '--secure-port=7443',
  ]);
});

test('kubeadm\'s leaf certificates from the CAs: the API server\'s names and addresses, etcd\'s server and peer for the node, the clients', async () => {
  const cas = { ca: await generateCertificate('ca'), etcd: await generateCertificate('etcd'), proxy: await generateCertificate('proxy') };
  const leaves = await kubeadmLeafCertificates(cas, { nodeName: 'dev-cp-0', nodeIP: '127.0.1.7', serviceCidr: '127.134.0.0/16', serviceDomain: 'cluster.local', endpointHost: '127.0.200.9', apiServerCertSANs: ['localhost'] });
  assert.deepEqual(Object.keys(leaves).sort(), ['apiserver', 'apiserver-etcd-client', 'apiserver-kubelet-client', 'etcd/healthcheck-client', 'etcd/peer', 'etcd/server', 'front-proxy-client']);
  const cert = (name: string) => new x509.X509Certificate(leaves[name].certPem);
  const sans = (name: string) => cert(name).getExtension(x509.SubjectAlternativeNameExtension)!.names.items.map((n) => n.value);
  assert.deepEqual(sans('apiserver'), ['dev-cp-0', 'kubernetes', 'kubernetes.default', 'kubernetes.default.svc', 'kubernetes.default.svc.cluster.local', '127.134.0.1', '127.0.1.7', '127.0.200.9', 'localhost']);
  assert.equal(cert('apiserver').issuer, 'CN=kubernetes');
  assert.equal(cert('etcd/peer').issuer, 'CN=etcd-ca');
  assert.deepEqual([...cert('etcd/peer').getExtension(x509.ExtendedKeyUsageExtension)!.usages].map(String), [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]);
  assert.ok(sans('etcd/server').includes('127.0.1.7') && sans('etcd/server').includes('localhost'));
  assert.equal(cert('front-proxy-client').issuer, 'CN=front-proxy-ca');
  assert.equal(cert('apiserver-kubelet-client').subject, 'CN=kube-apiserver-kubelet-client, O=system:masters');
  assert.ok(await cert('apiserver-etcd-client').verify({ publicKey: await new x509.X509Certificate(cas.etcd.certPem).publicKey.export(), signatureOnly: true }));
});
