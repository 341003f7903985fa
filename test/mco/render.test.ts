// The render step (src/mco/controller/render.ts): selection, merge order and rules, the rendered
// name, the rendered object's metadata, and refusal of invalid configs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { mergeMachineConfigs, renderPool, renderedName, selectMachineConfigs, RenderError, canonicalJson } from '../../src/mco/controller/render.js';
import { decodeDataUrl, encodeDataUrl } from '../../src/ignition/data-url.js';
import type { MachineConfig, MachineConfigPool, MachineConfigSpec } from '../../src/mco/controller/types.js';

const fixtures = fileURLToPath(new URL('./fixtures/', import.meta.url));
const docs = (file: string) => parseAllDocuments(readFileSync(fixtures + file, 'utf8')).map((d) => d.toJS());

const options = { controllerVersion: 'bosun-test', releaseVersion: '4.16.0', osImageURL: 'quay.io/os@sha256:base' };

function pool(name = 'worker', extra: Partial<MachineConfigPool['spec']> = {}): MachineConfigPool {
  return {
    apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool',
    metadata: { name, uid: `uid-${name}` },
    spec: { machineConfigSelector: { matchLabels: { 'machineconfiguration.openshift.io/role': name } }, ...extra },
  };
}

function mc(name: string, spec: Partial<MachineConfigSpec> & { files?: Record<string, string> }, role = 'worker'): MachineConfig & { spec: MachineConfigSpec } {
  const { files, ...rest } = spec;
  return {
    metadata: { name, labels: { 'machineconfiguration.openshift.io/role': role } },
    spec: {
      config: {
        ignition: { version: '3.2.0' },
        ...(files ? { storage: { files: Object.entries(files).map(([path, text]) => ({ path, mode: 420, overwrite: true, contents: { source: encodeDataUrl(text) } })) } } : {}),
      },
      ...rest,
    },
  };
}

function fileText(spec: MachineConfigSpec, path: string): string | undefined {
  const f = (spec.config as any).storage?.files?.find((x: any) => x.path === path);
  return f ? decodeDataUrl(f.contents.source).toString() : undefined;
}

test('later names win for the same path whatever order the configs arrive in', () => {
  const configs = [mc('50-b', { files: { '/etc/x': 'b', '/etc/only-b': 'B' } }), mc('10-a', { files: { '/etc/x': 'a', '/etc/only-a': 'A' } }), mc('99-c', { files: { '/etc/x': 'c' } })];
  for (const order of [configs, [...configs].reverse()]) {
    const { rendered, source } = renderPool(pool(), order, options);
    assert.equal(fileText(rendered.spec, '/etc/x'), 'c');
    assert.equal(fileText(rendered.spec, '/etc/only-a'), 'A');
    assert.equal(fileText(rendered.spec, '/etc/only-b'), 'B');
    assert.deepEqual(source.map((s) => s.name), ['10-a', '50-b', '99-c']);
  }
});

test('units and the core user merge by name, later wins', () => {
  const a = mc('10-a', {});
  (a.spec.config as any).systemd = { units: [{ name: 'x.service', enabled: true, contents: '[Unit]\nA' }] };
  const b = mc('20-b', {});
  (b.spec.config as any).systemd = { units: [{ name: 'x.service', contents: '[Unit]\nB' }] };
  const spec = mergeMachineConfigs([a, b]);
  assert.deepEqual((spec.config as any).systemd.units, [{ name: 'x.service', enabled: true, contents: '[Unit]\nB' }]);
});

test('MachineConfig fields: kernelArguments appended, extensions union, fips OR, kernelType and osImageURL last set', () => {
  const infraPool = pool('infra', { machineConfigSelector: { matchExpressions: [{ key: 'machineconfiguration.openshift.io/role', operator: 'In', values: ['worker', 'infra'] }] } });
  const table: { name: string; configs: MachineConfig[]; want: Partial<MachineConfigSpec>; pool?: MachineConfigPool }[] = [
    { name: 'defaults', configs: [mc('00-a', {})], want: { kernelArguments: [], extensions: [], fips: false, kernelType: 'default', osImageURL: options.osImageURL } },
    { name: 'kernel arguments in name order, duplicates kept', configs: [mc('20-b', { kernelArguments: ['b', 'x'] }), mc('10-a', { kernelArguments: ['a', 'x'] })], want: { kernelArguments: ['a', 'x', 'b', 'x'] } },
    { name: 'extensions union', configs: [mc('10-a', { extensions: ['usbguard', 'wasm'] }), mc('20-b', { extensions: ['wasm', 'ipsec'] })], want: { extensions: ['usbguard', 'wasm', 'ipsec'] } },
    { name: 'worker-role configs merge first', configs: [mc('10-infra', { kernelArguments: ['infra'], osImageURL: 'img-infra' }, 'infra'), mc('90-worker', { kernelArguments: ['worker'], osImageURL: 'img-worker' })], want: { kernelArguments: ['worker', 'infra'], osImageURL: 'img-infra' }, pool: infraPool },
    { name: 'fips any', configs: [mc('10-a', { fips: true }), mc('20-b', { fips: false })], want: { fips: true } },
    { name: 'kernelType last non-default', configs: [mc('10-a', { kernelType: 'realtime' }), mc('20-b', { kernelType: '64k-pages' }), mc('30-c', { kernelType: 'default' })], want: { kernelType: '64k-pages' } },
    { name: 'osImageURL last non-empty', configs: [mc('10-a', { osImageURL: 'img-a' }), mc('20-b', { osImageURL: 'img-b' }), mc('30-c', { osImageURL: '' })], want: { osImageURL: 'img-b' } },
  ];
  for (const row of table) {
    const { rendered } = renderPool(row.pool ?? pool(), row.configs, options);
    for (const [k, v] of Object.entries(row.want)) assert.deepEqual((rendered.spec as any)[k], v, `${row.name}: ${k}`);
  }
});

test('files without overwrite get overwrite=true; the rendered Ignition is 3.5.0', () => {
  const a = mc('10-a', {});
  (a.spec.config as any).storage = { files: [{ path: '/etc/y', contents: { source: 'data:,y' } }] };
  const spec = mergeMachineConfigs([a]);
  assert.equal((spec.config as any).storage.files[0].overwrite, true);
  assert.equal((spec.config as any).ignition.version, '3.5.0');
});

test('rendered name: 32 hex digits, same inputs same name, any spec change a new name', () => {
  const base = [mc('00-worker', { files: { '/etc/a': '1' } }), mc('99-worker-ssh', { kernelArguments: ['x'] })];
  const name = renderPool(pool(), base, options).rendered.metadata.name!;
  assert.match(name, /^rendered-worker-[0-9a-f]{32}$/);
  assert.equal(renderPool(pool(), [...base].reverse(), options).rendered.metadata.name, name);
  // Key order of the inputs does not matter.
  const reordered = base.map((m) => JSON.parse(canonicalJson(m)) as MachineConfig);
  const shuffled = reordered.map((m) => ({ spec: Object.fromEntries(Object.entries(m.spec!).reverse()), metadata: m.metadata }) as MachineConfig);
  assert.equal(renderPool(pool(), shuffled, options).rendered.metadata.name, name);
  // Metadata (annotations, the controller version) is not part of the hash.
  assert.equal(renderPool(pool(), base, { ...options, controllerVersion: 'other' }).rendered.metadata.name, name);
  const changes: MachineConfig[][] = [
    [mc('00-worker', { files: { '/etc/a': '2' } }), base[1]],
    [base[0], mc('99-worker-ssh', { kernelArguments: ['y'] })],
    [...base, mc('50-more', { extensions: ['usbguard'] })],
    [base[0], mc('99-worker-ssh', { kernelArguments: ['x'], fips: true })],
  ];
  const seen = new Set([name]);
  for (const c of changes) {
    const n = renderPool(pool(), c, options).rendered.metadata.name!;
    assert.ok(!seen.has(n), `expected a new name for ${JSON.stringify(c.map((m) => m.spec))}`);
    seen.add(n);
  }
  assert.notEqual(renderPool(pool(), base, { ...options, osImageURL: 'other' }).rendered.metadata.name, name);
  assert.equal(renderedName('worker', renderPool(pool(), base, options).rendered.spec), name);
});

test('rendered object: owner reference to the pool, annotations, source list', () => {
  const { rendered, source } = renderPool(pool(), [mc('00-worker', {})], options);
  assert.deepEqual(rendered.metadata.ownerReferences, [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfigPool', name: 'worker', uid: 'uid-worker', controller: true, blockOwnerDeletion: true }]);
  assert.deepEqual(rendered.metadata.annotations, {
    'machineconfiguration.openshift.io/generated-by-controller-version': 'bosun-test',
    'machineconfiguration.openshift.io/release-image-version': '4.16.0',
  });
  assert.deepEqual(source, [{ apiVersion: 'machineconfiguration.openshift.io/v1', kind: 'MachineConfig', name: '00-worker' }]);
  assert.equal(rendered.metadata.labels, undefined, 'rendered configs carry no role label, so no pool selects them');
});

test('selection: matchLabels, matchExpressions (a custom pool takes worker configs too, and its own win), empty selects nothing', () => {
  const all = [mc('00-worker', {}), mc('00-master', {}, 'master'), mc('50-infra', { files: { '/etc/kubernetes/kubelet.conf': 'infra' } }, 'infra'), mc('99-worker-generated-kubelet', { files: { '/etc/kubernetes/kubelet.conf': 'worker' } })];
  assert.deepEqual(selectMachineConfigs(pool('worker'), all).map((m) => m.metadata.name), ['00-worker', '99-worker-generated-kubelet']);
  const [, infra] = docs('openshift-machineconfigpools.yaml') as MachineConfigPool[];
  assert.deepEqual(selectMachineConfigs(infra, all).map((m) => m.metadata.name), ['00-worker', '99-worker-generated-kubelet', '50-infra']);
  assert.equal(fileText(renderPool(infra, all, options).rendered.spec, '/etc/kubernetes/kubelet.conf'), 'infra');
  assert.deepEqual(selectMachineConfigs(pool('worker', { machineConfigSelector: {} }), all), []);
  assert.throws(() => renderPool(pool('worker', { machineConfigSelector: {} }), all, options), (e: unknown) => e instanceof RenderError && e.reason === 'NoMachineConfigs' && /machineConfigSelector is empty, which selects nothing/.test(e.message));
  assert.throws(() => renderPool(pool('gpu'), all, options), (e: unknown) => e instanceof RenderError && /pool gpu: no MachineConfigs match/.test(e.message));
  assert.throws(() => renderPool(pool('worker', { machineConfigSelector: { matchExpressions: [{ key: 'a', operator: 'Bogus' }] } }), all, options),
    (e: unknown) => e instanceof RenderError && e.reason === 'InvalidSelector' && /Bogus/.test(e.message));
});

test('OpenShift\'s own MachineConfigs render for its worker pool', () => {
  const [worker] = docs('openshift-machineconfigpools.yaml') as MachineConfigPool[];
  const mcs = docs('openshift-machineconfigs.yaml') as MachineConfig[];
  const { rendered, source } = renderPool(worker, mcs, options);
  assert.deepEqual(source.map((s) => s.name), ['05-worker-kernelarg-selinuxpermissive', '99-worker-chrony']);
  assert.deepEqual(rendered.spec.kernelArguments, ['enforcing=0']);
  assert.match(fileText(rendered.spec, '/etc/chrony.conf')!, /^pool 0.rhel.pool.ntp.org iburst/);
});

test('the kernel-devel extension with a non-default kernel stops the render, naming the configs', () => {
  assert.throws(() => renderPool(pool(), [mc('10-rt', { kernelType: 'realtime' }), mc('20-devel', { extensions: ['kernel-devel'] })], options),
    (e: unknown) => e instanceof RenderError && e.machineConfigs.join() === '10-rt,20-devel' && /kernel-devel extension needs the default kernel, not kernelType realtime/.test(e.message));
  assert.ok(renderPool(pool(), [mc('10-rt', { kernelType: 'default' }), mc('20-devel', { extensions: ['kernel-devel'] })], options));
});

test('baseOSExtensionsContainerImage: the ControllerConfig\'s unless a config sets one', () => {
  assert.equal(mergeMachineConfigs([mc('10-a', {})], { baseOSExtensionsContainerImage: 'ext:cc' }).baseOSExtensionsContainerImage, 'ext:cc');
  assert.equal(mergeMachineConfigs([mc('10-a', { baseOSExtensionsContainerImage: 'ext:mc' }), mc('20-b', {})], { baseOSExtensionsContainerImage: 'ext:cc' }).baseOSExtensionsContainerImage, 'ext:mc');
});

test('an invalid MachineConfig stops the render, naming it and the field', () => {
  const bad = mc('50-bad', {});
  (bad.spec.config as any).storage = { files: [{ path: 'relative/path', contents: { source: 'data:,x' } }] };
  assert.throws(() => renderPool(pool(), [mc('00-worker', {}), bad], options), (e: unknown) => {
    assert.ok(e instanceof RenderError);
    assert.equal(e.reason, 'InvalidMachineConfig');
    assert.deepEqual(e.machineConfigs, ['50-bad']);
    assert.match(e.message, /MachineConfig 50-bad is invalid: spec\.config\.storage\.files\[0\]\.path: "relative\/path" is not absolute/);
    return true;
  });
});
