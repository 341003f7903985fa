// Validation of single MachineConfigs and the reconcilability rules (src/mco/controller/validation.ts):
// one table row per rule, each with a change that is refused and, where it matters, a neighbouring
// change that is allowed; and how the render step blames the MachineConfig at fault.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { unreconcilableChanges, validateMachineConfig } from '../../src/mco/controller/validation.js';
import { mergeMachineConfigs, renderPool, RenderError } from '../../src/mco/controller/render.js';
import type { MachineConfig, MachineConfigSpec } from '../../src/mco/controller/types.js';

const ign = (rest: Record<string, unknown> = {}, version = '3.2.0') => ({ ignition: { version }, ...rest });
const spec = (config: Record<string, unknown>, extra: Partial<MachineConfigSpec> = {}): MachineConfigSpec => ({ config, ...extra });
const file = (path: string, extra: Record<string, unknown> = {}) => ({ path, mode: 420, contents: { source: 'data:,x' }, ...extra });

test('validateMachineConfig: one row per rule', () => {
  const rows: { name: string; spec: MachineConfigSpec; field?: string; message?: RegExp }[] = [
    { name: 'valid', spec: spec(ign({ storage: { files: [file('/etc/a')] } }), { kernelType: 'realtime', extensions: ['usbguard'] }) },
    { name: 'no config at all is fine', spec: { kernelArguments: ['nosmt'] } },
    { name: 'Ignition version too new', spec: spec(ign({}, '3.6.0')), field: 'spec.config.ignition.version', message: /unsupported config version "3\.6\.0"/ },
    { name: 'Ignition spec 2', spec: spec(ign({}, '2.2.0')), field: 'spec.config.ignition.version', message: /unsupported/ },
    // Ignition ignores a key its version does not know ("unused key", a warning), so the MCO does.
    { name: 'field newer than the version is only an Ignition warning', spec: spec(ign({ kernelArguments: { shouldExist: ['a'] } }, '3.2.0')) },
    { name: 'duplicate path', spec: spec(ign({ storage: { files: [file('/etc/a'), file('/etc/a')] } })), field: 'spec.config.storage.files[1].path', message: /duplicate path/ },
    { name: 'undecodable data URL', spec: spec(ign({ storage: { files: [file('/etc/a', { contents: { source: 'data:;base64,!!' } })] } })), field: 'spec.config.storage.files[0].contents.source', message: /base64/ },
    { name: 'setuid bit', spec: spec(ign({ storage: { files: [file('/usr/local/bin/x', { mode: 0o4755 })] } })), field: 'spec.config.storage.files[0].mode', message: /setuid, setgid or sticky/ },
    { name: 'sticky bit', spec: spec(ign({ storage: { files: [file('/etc/x', { mode: 0o1644 })] } })), field: 'spec.config.storage.files[0].mode', message: /01644/ },
    { name: 'unknown kernelType', spec: { kernelType: 'lowlatency' }, field: 'spec.kernelType', message: /unknown kernelType "lowlatency"/ },
    { name: 'unsupported extension', spec: { extensions: ['usbguard', 'vim'] }, field: 'spec.extensions[1]', message: /unsupported extension "vim"/ },
  ];
  for (const row of rows) {
    const problems = validateMachineConfig({ metadata: { name: row.name }, spec: row.spec });
    if (!row.field) { assert.deepEqual(problems, [], row.name); continue; }
    const hit = problems.find((p) => p.field === row.field);
    assert.ok(hit, `${row.name}: expected a problem at ${row.field}, got ${JSON.stringify(problems)}`);
    assert.match(hit.message, row.message!, row.name);
  }
});

test('unreconcilableChanges: one row per rule', () => {
  const core = { name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAA old'] };
  const current = spec(ign({ passwd: { users: [core] }, storage: { files: [file('/etc/a')] }, systemd: { units: [{ name: 'a.service', enabled: true }] } }, '3.5.0'));
  const withConfig = (rest: Record<string, unknown>, extra: Partial<MachineConfigSpec> = {}) => spec({ ...(current.config as object), ...rest }, extra);
  const rows: { name: string; next: MachineConfigSpec; field?: string }[] = [
    { name: 'no change', next: current },
    { name: 'only the Ignition version differs', next: { ...current, config: { ...(current.config as any), ignition: { version: '3.4.0' } } } },
    { name: 'files may change and be added', next: withConfig({ storage: { files: [file('/etc/a', { mode: 384 }), file('/etc/b')] } }) },
    { name: 'units may change', next: withConfig({ systemd: { units: [{ name: 'a.service', enabled: false }, { name: 'b.service', mask: true }] } }) },
    { name: 'core ssh keys and password may change', next: withConfig({ passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['ssh-ed25519 AAAA new'], passwordHash: '$6$x' }] } }) },
    { name: 'kernel arguments, extensions, kernelType, osImageURL may change', next: { ...current, kernelArguments: ['nosmt'], extensions: ['usbguard'], kernelType: 'realtime', osImageURL: 'img' } },
    { name: 'Ignition section', next: withConfig({ ignition: { version: '3.5.0', timeouts: { httpTotal: 10 } } }), field: 'spec.config.ignition' },
    { name: 'another user', next: withConfig({ passwd: { users: [core, { name: 'alice' }] } }), field: 'spec.config.passwd.users[1]' },
    { name: 'core user shell', next: withConfig({ passwd: { users: [{ ...core, shell: '/bin/zsh' }] } }), field: 'spec.config.passwd.users[0].shell' },
    { name: 'core user removed', next: withConfig({ passwd: { users: [] } }), field: 'spec.config.passwd.users' },
    { name: 'groups', next: withConfig({ passwd: { users: [core], groups: [{ name: 'wheel' }] } }), field: 'spec.config.passwd.groups' },
    { name: 'disks', next: withConfig({ storage: { files: [file('/etc/a')], disks: [{ device: '/dev/sdb', wipeTable: true }] } }), field: 'spec.config.storage.disks' },
    { name: 'raid', next: withConfig({ storage: { files: [file('/etc/a')], raid: [{ name: 'md0', level: 'raid1', devices: ['/dev/sdb', '/dev/sdc'] }] } }), field: 'spec.config.storage.raid' },
    { name: 'filesystems', next: withConfig({ storage: { files: [file('/etc/a')], filesystems: [{ device: '/dev/sdb1', format: 'xfs', path: '/var/lib/x' }] } }), field: 'spec.config.storage.filesystems' },
    { name: 'luks', next: withConfig({ storage: { files: [file('/etc/a')], luks: [{ name: 'root', device: '/dev/sdb' }] } }), field: 'spec.config.storage.luks' },
    { name: 'directories', next: withConfig({ storage: { files: [file('/etc/a')], directories: [{ path: '/etc/d' }] } }), field: 'spec.config.storage.directories' },
    { name: 'links', next: withConfig({ storage: { files: [file('/etc/a')], links: [{ path: '/etc/l', target: '/etc/a' }] } }), field: 'spec.config.storage.links' },
    { name: 'append', next: withConfig({ storage: { files: [file('/etc/a'), { path: '/etc/b', append: [{ source: 'data:,more' }] }] } }), field: 'spec.config.storage.files[1].append' },
    { name: 'Ignition kernelArguments', next: withConfig({ kernelArguments: { shouldExist: ['nosmt'] } }), field: 'spec.config.kernelArguments' },
    { name: 'fips on', next: { ...current, fips: true }, field: 'spec.fips' },
  ];
  for (const row of rows) {
    const problems = unreconcilableChanges(current, row.next);
    if (!row.field) { assert.deepEqual(problems, [], row.name); continue; }
    assert.ok(problems.some((p) => p.field === row.field), `${row.name}: expected ${row.field}, got ${JSON.stringify(problems)}`);
  }
  assert.deepEqual(unreconcilableChanges({ fips: true }, { fips: false }).map((p) => p.field), ['spec.fips']);
});

test('an unreconcilable MachineConfig is named in the render error; the first render accepts anything valid', () => {
  const pool = { metadata: { name: 'worker', uid: 'u' }, spec: { machineConfigSelector: { matchLabels: { 'machineconfiguration.openshift.io/role': 'worker' } } } };
  const mc = (name: string, config: Record<string, unknown>): MachineConfig => ({ metadata: { name, labels: { 'machineconfiguration.openshift.io/role': 'worker' } }, spec: { config: ign(config) } });
  const base = [mc('00-worker', { storage: { files: [file('/etc/a')] } }), mc('99-worker-ssh', { passwd: { users: [{ name: 'core', sshAuthorizedKeys: ['k'] }] } })];
  const currentSpec = mergeMachineConfigs(base);
  const opts = { controllerVersion: 'v', currentSpec, currentSources: ['00-worker', '99-worker-ssh'] };
  const withDir = [...base, mc('50-dirs', { storage: { directories: [{ path: '/var/lib/d' }] } })];
  assert.throws(() => renderPool(pool, withDir, opts), (e: unknown) => {
    assert.ok(e instanceof RenderError);
    assert.equal(e.reason, 'Unreconcilable');
    assert.deepEqual(e.machineConfigs, ['50-dirs']);
    assert.match(e.message, /^MachineConfig 50-dirs: change cannot be applied to running nodes of pool worker: spec\.config\.storage\.directories/);
    return true;
  });
  const withUser = [...base, mc('60-users', { passwd: { users: [{ name: 'alice' }] } })];
  assert.throws(() => renderPool(pool, withUser, opts), (e: unknown) => e instanceof RenderError && e.machineConfigs.join() === '60-users');
  // Without a current config (a pool rendering for the first time, i.e. install) the same configs are fine.
  assert.ok(renderPool(pool, withDir, { controllerVersion: 'v' }).rendered.metadata.name);
  // Removing a config can be unreconcilable too (here: dropping the core user).
  assert.throws(() => renderPool(pool, [base[0]], opts), (e: unknown) => e instanceof RenderError && /^removing a MachineConfig/.test(e.message));
});
