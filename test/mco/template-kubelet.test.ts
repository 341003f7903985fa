// Base configs from a ControllerConfig (src/mco/controller/template.ts) and KubeletConfig →
// `99-<pool>-generated-kubelet` (src/mco/controller/kubelet-config.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { cloudProvider, generateTemplateConfigs, TemplateError } from '../../src/mco/controller/template.js';
import { generateKubeletConfigs, validateKubeletConfig } from '../../src/mco/controller/kubelet-config.js';
import { kubeletTlsFor } from '../../src/mco/controller/tls-profile.js';
import { validateMachineConfig } from '../../src/mco/controller/validation.js';
import { mergeMachineConfigs, renderedName } from '../../src/mco/controller/render.js';
import { decodeDataUrl } from '../../src/ignition/data-url.js';
import { controllerConfig, TEST_CA } from './controller-fixtures.js';
import type { KubeletConfig, MachineConfig, MachineConfigPool, MachineConfigSpec } from '../../src/mco/controller/types.js';

const CA = TEST_CA;
const inputs = { controllerVersion: 'v1', pullSecret: '{"auths":{"quay.io":{"auth":"eDp5"}}}', sshAuthorizedKeys: ['ssh-ed25519 AAAA admin@example.com'] };

function fileOf(mc: MachineConfig | MachineConfigSpec, path: string): { text: string; mode: number } | undefined {
  const spec: MachineConfigSpec = 'metadata' in mc ? mc.spec ?? {} : mc;
  const f = (spec.config as any).storage?.files?.find((x: any) => x.path === path);
  return f ? { text: decodeDataUrl(f.contents.source).toString(), mode: f.mode } : undefined;
}

test('templates: the OpenShift names per role, each valid, labelled, owned by the ControllerConfig', () => {
  const mcs = generateTemplateConfigs(controllerConfig(), inputs);
  assert.deepEqual(mcs.map((m) => m.metadata.name), [
    '00-master', '00-worker', '01-master-container-runtime', '01-master-kubelet', '01-worker-container-runtime', '01-worker-kubelet', '99-master-ssh', '99-worker-ssh',
  ]);
  for (const mc of mcs) {
    assert.deepEqual(validateMachineConfig(mc), [], mc.metadata.name);
    assert.equal(mc.metadata.labels!['machineconfiguration.openshift.io/role'], mc.metadata.name!.includes('master') ? 'master' : 'worker');
    assert.equal(mc.metadata.annotations!['machineconfiguration.openshift.io/generated-by-controller-version'], 'v1');
    assert.equal(mc.metadata.ownerReferences![0].kind, 'ControllerConfig');
  }
  const byName = new Map(mcs.map((m) => [m.metadata.name, m]));
  assert.equal(fileOf(byName.get('00-worker')!, '/etc/kubernetes/kubelet-ca.crt')!.text, CA);
  assert.deepEqual(fileOf(byName.get('00-worker')!, '/var/lib/kubelet/config.json'), { text: inputs.pullSecret, mode: 0o600 });
  const kubelet = JSON.parse(fileOf(byName.get('01-worker-kubelet')!, '/etc/kubernetes/kubelet.conf')!.text);
  assert.equal(kubelet.kind, 'KubeletConfiguration');
  assert.deepEqual(kubelet.clusterDNS, ['172.30.0.10']);
  assert.equal(kubelet.authentication.x509.clientCAFile, '/etc/kubernetes/kubelet-ca.crt');
  assert.equal(kubelet.registerWithTaints, undefined);
  assert.deepEqual(JSON.parse(fileOf(byName.get('01-master-kubelet')!, '/etc/kubernetes/kubelet.conf')!.text).registerWithTaints, [{ effect: 'NoSchedule', key: 'node-role.kubernetes.io/master' }]);
  const unit = (byName.get('01-worker-kubelet')!.spec!.config as any).systemd.units[0];
  assert.equal(unit.name, 'kubelet.service');
  assert.equal(unit.enabled, true);
  assert.match(unit.contents, /--config=\/etc\/kubernetes\/kubelet\.conf/);
  assert.match(unit.contents, /--node-labels=node-role\.kubernetes\.io\/worker /);
  assert.match(fileOf(byName.get('01-worker-container-runtime')!, '/etc/crio/crio.conf.d/01-bosun-base')!.text, /pause_image = "quay\.io\/bosun\/pause:3\.9"/);
  assert.deepEqual((byName.get('99-worker-ssh')!.spec!.config as any).passwd.users, [{ name: 'core', sshAuthorizedKeys: inputs.sshAuthorizedKeys }]);
});

test('the kubelet unit passes --cloud-provider as OpenShift renders it: external where a cloud controller manager initialises nodes', () => {
  const external = (state?: string) => ({ status: { platformStatus: { type: 'External', ...(state ? { external: { cloudControllerManager: { state } } } : {}) } } });
  const cases: Array<[string, Parameters<typeof controllerConfig>[0], string]> = [
    ['no platform', {}, ''],
    ['None', { platform: 'none', infra: { status: { platformStatus: { type: 'None' } } } }, ''],
    ['BareMetal', { platform: 'baremetal' }, ''],
    ['AWS', { platform: 'aws', infra: { status: { platformStatus: { type: 'AWS' } } } }, 'external'],
    ['GCP, from the platform field alone', { platform: 'gcp' }, 'external'],
    ['External with its CCM External (bosun\'s local cloud)', { platform: 'external', infra: external('External') }, 'external'],
    ['External without a CCM', { platform: 'external', infra: external('None') }, ''],
    ['External saying nothing', { platform: 'external', infra: external() }, ''],
  ];
  for (const [name, spec, want] of cases) {
    const cc = controllerConfig(spec);
    assert.equal(cloudProvider(cc), want, name);
    const unit = (generateTemplateConfigs(cc, inputs).find((m) => m.metadata.name === '01-worker-kubelet')!.spec!.config as any).systemd.units[0];
    assert.match(unit.contents, new RegExp(`\\n    --cloud-provider=${want} \\\\\\n`), name);
  }
});

test('templates are deterministic and follow their inputs', () => {
  const a = JSON.stringify(generateTemplateConfigs(controllerConfig(), inputs));
  assert.equal(JSON.stringify(generateTemplateConfigs(controllerConfig(), { ...inputs })), a);
  const changed = controllerConfig();
  changed.spec.clusterDNSIP = '172.30.0.11';
  assert.notEqual(JSON.stringify(generateTemplateConfigs(changed, inputs)), a);
  const names = generateTemplateConfigs(controllerConfig(), { controllerVersion: 'v1' }).map((m) => m.metadata.name);
  assert.ok(!names.includes('99-worker-ssh') && !names.includes('99-master-ssh'), 'no ssh config without keys');
  assert.equal(fileOf(generateTemplateConfigs(controllerConfig(), { controllerVersion: 'v1' })[1], '/var/lib/kubelet/config.json'), undefined);
});

test('templates refuse a ControllerConfig they cannot use', () => {
  const noCa = controllerConfig();
  noCa.spec.kubeAPIServerServingCAData = Buffer.from('not a certificate').toString('base64');
  assert.throws(() => generateTemplateConfigs(noCa, inputs), (e: unknown) => e instanceof TemplateError && /kubeAPIServerServingCAData holds no PEM certificate/.test(e.message));
  const noDns = controllerConfig();
  noDns.spec.clusterDNSIP = '';
  assert.throws(() => generateTemplateConfigs(noDns, inputs), /clusterDNSIP is empty/);
  assert.throws(() => generateTemplateConfigs(controllerConfig(), { ...inputs, pullSecret: 'nope' }), /pull secret is not JSON/);
});

const pools: MachineConfigPool[] = ['master', 'worker', 'infra'].map((name) => ({
  metadata: { name, labels: { [`pools.operator.machineconfiguration.openshift.io/${name}`]: '' } },
  spec: {},
}));
const kubeletConfig = (name: string, spec: Record<string, unknown>, created = '2024-01-01T00:00:00Z'): KubeletConfig => ({
  apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'KubeletConfig',
  metadata: { name, uid: `uid-${name}`, creationTimestamp: created },
  spec: { machineConfigPoolSelector: { matchLabels: { 'pools.operator.machineconfiguration.openshift.io/worker': '' } }, ...spec },
});

test('KubeletConfig (OpenShift\'s example) → 99-worker-generated-kubelet: base plus user fields, later in merge order than the template', () => {
  const fixture = parseYaml(readFileSync(fileURLToPath(new URL('./fixtures/openshift-kubeletconfig.yaml', import.meta.url)), 'utf8')) as KubeletConfig;
  const out = generateKubeletConfigs([fixture], pools, controllerConfig(), 'v1');
  assert.deepEqual(out.conditions.get('set-max-pods'), { type: 'Success', status: 'True', message: 'Success' });
  assert.deepEqual(out.machineConfigs.map((m) => m.metadata.name), ['99-worker-generated-kubelet']);
  const mc = out.machineConfigs[0];
  assert.deepEqual(validateMachineConfig(mc), []);
  assert.equal(mc.metadata.labels!['machineconfiguration.openshift.io/role'], 'worker');
  assert.equal(mc.metadata.ownerReferences![0].kind, 'KubeletConfig');
  const conf = JSON.parse(fileOf(mc, '/etc/kubernetes/kubelet.conf')!.text);
  assert.equal(conf.maxPods, 500);
  assert.deepEqual(conf.systemReserved, { cpu: '1000m', 'ephemeral-storage': '1Gi', memory: '1Gi' });
  assert.deepEqual(conf.clusterDNS, ['172.30.0.10']);
  assert.equal(conf.tlsMinVersion, 'VersionTLS12');
  assert.deepEqual(conf.tlsCipherSuites, ['TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256']);
  // Merged after the template, the generated file wins.
  const merged = mergeMachineConfigs([...generateTemplateConfigs(controllerConfig(), inputs).filter((m) => m.metadata.labels!['machineconfiguration.openshift.io/role'] === 'worker'), mc]);
  assert.equal(JSON.parse(fileOf(merged, '/etc/kubernetes/kubelet.conf')!.text).maxPods, 500);
});

test('KubeletConfig: forbidden and inconsistent fields give a Failure condition and no MachineConfig', () => {
  const rows: [Record<string, unknown>, RegExp][] = [
    [{ kubeletConfig: { cgroupDriver: 'cgroupfs' } }, /cgroupDriver is not allowed to be set .*but contains: "cgroupfs"/],
    [{ kubeletConfig: { clusterDNS: ['1.1.1.1'] } }, /clusterDNS is not allowed/],
    [{ kubeletConfig: { staticPodPath: '/tmp' } }, /staticPodPath is not allowed/],
    [{ kubeletConfig: { featureGates: { X: true } } }, /featureGates is not allowed/],
    [{ kubeletConfig: { evictionSoft: { 'memory.available': '500Mi' } } }, /evictionSoft\.memory\.available needs evictionSoftGracePeriod\.memory\.available/],
    [{ autoSizingReserved: true, kubeletConfig: { systemReserved: { cpu: '1' } } }, /autoSizingReserved and systemReserved/],
    [{}, /KubeletConfig is empty/],
    [{ tlsSecurityProfile: { type: 'Custom', custom: { ciphers: ['ECDHE-RSA-AES128-GCM-SHA256', 'NOT-A-CIPHER'], minTLSVersion: 'VersionTLS12' } } }, /unknown cipher "NOT-A-CIPHER"/],
    [{ tlsSecurityProfile: { type: 'Paranoid' } }, /unknown type "Paranoid"/],
    [{ tlsSecurityProfile: { type: 'Modern' }, kubeletConfig: { tlsMinVersion: 'VersionTLS10' } }, /tlsMinVersion cannot be set together with spec\.tlsSecurityProfile/],
    [{ kubeletConfig: { maxPods: 300 }, machineConfigPoolSelector: { matchLabels: { nothing: 'here' } } }, /selects no MachineConfigPool/],
  ];
  for (const [spec, message] of rows) {
    const kc = kubeletConfig('bad', spec);
    const out = generateKubeletConfigs([kc], pools, controllerConfig(), 'v1');
    assert.deepEqual(out.machineConfigs, [], JSON.stringify(spec));
    const c = out.conditions.get('bad')!;
    assert.equal(c.type, 'Failure');
    assert.equal(c.status, 'False');
    assert.match(c.message!, /^Error: /);
    assert.match(c.message!, message);
  }
  assert.deepEqual(validateKubeletConfig(kubeletConfig('ok', { kubeletConfig: { maxPods: 300, evictionSoft: { 'memory.available': '1Gi' }, evictionSoftGracePeriod: { 'memory.available': '1m' } } })), []);
});

test('several KubeletConfigs for one pool: oldest takes the plain name, newer ones suffixes; log level and auto sizing', () => {
  const older = kubeletConfig('b-older', { kubeletConfig: { maxPods: 300 } }, '2024-01-01T00:00:00Z');
  const newer = kubeletConfig('a-newer', { logLevel: 4, autoSizingReserved: true }, '2024-02-01T00:00:00Z');
  const out = generateKubeletConfigs([newer, older], pools, controllerConfig(), 'v1');
  assert.deepEqual(out.machineConfigs.map((m) => [m.metadata.name, m.metadata.ownerReferences![0].name]), [
    ['99-worker-generated-kubelet', 'b-older'], ['99-worker-generated-kubelet-1', 'a-newer'],
  ]);
  const second = out.machineConfigs[1];
  assert.equal(fileOf(second, '/etc/node-sizing-enabled.env')!.text, 'NODE_SIZING_ENABLED=true\n');
  assert.equal(JSON.parse(fileOf(second, '/etc/kubernetes/kubelet.conf')!.text).systemReserved, undefined);
  assert.deepEqual((second.spec!.config as any).systemd.units, [{ name: 'kubelet.service', dropins: [{ name: '20-logging.conf', contents: '[Service]\nEnvironment="KUBELET_LOG_LEVEL=4"\n' }] }]);
  assert.deepEqual(validateMachineConfig(second), []);
  // Same inputs, same bytes.
  assert.equal(JSON.stringify(generateKubeletConfigs([older, newer], pools, controllerConfig(), 'v1').machineConfigs), JSON.stringify(out.machineConfigs));
});

test('TLS profiles: OpenSSL names become the IANA names the kubelet takes; suites Go lacks are left out', () => {
  assert.deepEqual(kubeletTlsFor({ type: 'Intermediate' }), {
    tlsMinVersion: 'VersionTLS12',
    tlsCipherSuites: [
      'TLS_AES_128_GCM_SHA256', 'TLS_AES_256_GCM_SHA384', 'TLS_CHACHA20_POLY1305_SHA256',
      'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256', 'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
      'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384', 'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256', 'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256',
    ],
  });
  assert.deepEqual(kubeletTlsFor({ type: 'Modern' }).tlsMinVersion, 'VersionTLS13');
  const old = kubeletTlsFor({ type: 'Old' });
  assert.equal(old.tlsMinVersion, 'VersionTLS10');
  assert.ok(old.tlsCipherSuites.includes('TLS_RSA_WITH_3DES_EDE_CBC_SHA') && !old.tlsCipherSuites.some((c) => c.startsWith('TLS_DHE')));
  assert.throws(() => kubeletTlsFor({ type: 'Custom', custom: { ciphers: ['DHE-RSA-AES128-GCM-SHA256'], minTLSVersion: 'VersionTLS12' } }), /no cipher suite the kubelet can offer/);
  assert.throws(() => kubeletTlsFor({ type: 'Custom', custom: { ciphers: ['AES128-SHA'], minTLSVersion: 'TLS1.2' } }), /minTLSVersion "TLS1\.2"/);
  assert.throws(() => kubeletTlsFor({ type: 'Custom' }), /needs custom\.ciphers/);
});

test('the templates come with the release: /etc/bosun-release names it, so each release renders new configs for both pools', () => {
  const of = (version?: string) => generateTemplateConfigs(controllerConfig({ images: { infraImageKey: 'quay.io/bosun/pause:3.9', ...(version ? { releaseVersion: version } : {}) } }), inputs);
  for (const role of ['master', 'worker']) {
    const base = (v?: string) => of(v).find((m) => m.metadata.name === `00-${role}`)!;
    assert.deepEqual(fileOf(base('1.0.1'), '/etc/bosun-release'), { text: "# The bosun release whose machine-config templates rendered this node's configuration.\nVERSION=1.0.1\n", mode: 0o644 });
    assert.equal(fileOf(base(), '/etc/bosun-release'), undefined, 'no release named, no file');
    const spec = (v: string) => mergeMachineConfigs(of(v).filter((m) => m.metadata.labels!['machineconfiguration.openshift.io/role'] === role));
    assert.notEqual(renderedName(role, spec('1.0.0')), renderedName(role, spec('1.0.1')), `${role}: a new release, a new rendered config`);
    assert.equal(renderedName(role, spec('1.0.1')), renderedName(role, spec('1.0.1')));
  }
  assert.throws(() => of('1.0.1\nEVIL=1'), (e: Error) => e instanceof TemplateError && /releaseVersion .* is not a version/.test(e.message));
});
