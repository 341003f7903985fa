// The daemon's diff between rendered configs and the node disruption policy's plan for it
// (src/mco/daemon/diff.ts, disruption-policy.ts), one row per rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffConfigs } from '../../src/mco/daemon/diff.js';
import { planActions, type NodeDisruptionPolicy } from '../../src/mco/daemon/disruption-policy.js';
import { encodeDataUrl } from '../../src/ignition/data-url.js';
import { managedEntries, describeMode } from '../../src/mco/daemon/managed.js';
import type { MachineConfigSpec } from '../../src/mco/controller/types.js';

const file = (path: string, text: string, mode = 0o644) => ({ path, mode, overwrite: true, contents: { source: encodeDataUrl(text) } });
const spec = (o: { files?: object[]; units?: object[]; keys?: string[]; kargs?: string[]; kernelType?: string } = {}): MachineConfigSpec => ({
  config: { ignition: { version: '3.2.0' }, storage: { files: o.files ?? [] }, systemd: { units: o.units ?? [] }, passwd: { users: [{ name: 'core', sshAuthorizedKeys: o.keys ?? ['ssh-ed25519 AAAA a'] }] } },
  kernelArguments: o.kargs ?? [], kernelType: o.kernelType,
});

test('managed entries: units, drop-ins, masks, enablement links and ssh keys', () => {
  const m = managedEntries(spec({ units: [
    { name: 'a.service', enabled: true, contents: '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n', dropins: [{ name: '10-x.conf', contents: '[Service]\n' }] },
    { name: 'b.service', mask: true },
    { name: 'c.service', enabled: false },
  ] }));
  assert.deepEqual([...m.keys()].sort(), [
    '/etc/systemd/system/a.service', '/etc/systemd/system/a.service.d/10-x.conf', '/etc/systemd/system/b.service',
    '/etc/systemd/system/multi-user.target.wants/a.service', '/etc/systemd/system/multi-user.target.wants/c.service', '/home/core/.ssh/authorized_keys.d/ignition',
  ]);
  assert.equal(m.get('/etc/systemd/system/b.service')?.kind, 'link');
  assert.equal(m.get('/etc/systemd/system/multi-user.target.wants/c.service')?.kind, 'absent');
  assert.equal((m.get('/home/core/.ssh/authorized_keys.d/ignition') as { mode: number }).mode, 0o600);
  assert.equal(describeMode(0o644), '-rw-r--r--/420/0644');
  assert.equal(describeMode(0o600), '-rw-------/384/0600');
});

test('planActions: one row per policy rule', () => {
  const before = spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'x\n')] });
  const rows: { name: string; to: MachineConfigSpec; policy?: NodeDisruptionPolicy; reboot: boolean; drain: boolean; post?: string[] }[] = [
    { name: 'a file without policy reboots', to: spec({ files: [file('/etc/a', 'b'), file('/etc/containers/registries.conf', 'x\n')] }), reboot: true, drain: true },
    { name: 'a new file without policy reboots', to: spec({ files: [file('/etc/a', 'a'), file('/etc/b', 'b'), file('/etc/containers/registries.conf', 'x\n')] }), reboot: true, drain: true },
    { name: 'a mode change reboots', to: spec({ files: [file('/etc/a', 'a', 0o600), file('/etc/containers/registries.conf', 'x\n')] }), reboot: true, drain: true },
    { name: 'ssh keys only: None', to: spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'x\n')], keys: ['ssh-ed25519 BBBB b'] }), reboot: false, drain: false, post: [] },
    { name: 'the pull secret: None', to: spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'x\n'), file('/var/lib/kubelet/config.json', '{}')] }), reboot: false, drain: false, post: [] },
    { name: 'policy.json: reload crio', to: spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'x\n'), file('/etc/containers/policy.json', '{}')] }), reboot: false, drain: false, post: ['Reload'] },
    { name: 'closest path wins: registries.d/<file>', to: spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'x\n'), file('/etc/containers/registries.d/q.yaml', 'q')] }), reboot: false, drain: false, post: ['Reload'] },
    { name: 'registries.conf addition: reload, no drain', to: spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'x\ny\n')] }), reboot: false, drain: false, post: ['Reload'] },
    { name: 'registries.conf removal: drain and reload', to: spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'y\n')] }), reboot: false, drain: true, post: ['Reload'] },
    { name: 'an administrator policy for the path', to: spec({ files: [file('/etc/a', 'b'), file('/etc/containers/registries.conf', 'x\n')] }), policy: { files: [{ path: '/etc', actions: [{ type: 'Restart', restart: { serviceName: 'x.service' } }] }] }, reboot: false, drain: false, post: ['Restart'] },
    { name: 'Reboot anywhere makes it one Reboot', to: spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'x\n'), file('/etc/containers/policy.json', '{}')], kargs: ['nosmt'] }), reboot: true, drain: true, post: [] },
    { name: 'kernel type reboots', to: spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'x\n')], kernelType: 'realtime' }), reboot: true, drain: true },
    { name: 'a unit without policy reboots', to: spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'x\n')], units: [{ name: 'u.service', contents: '[Service]\n' }] }), reboot: true, drain: true },
    { name: 'a unit with a DaemonReload policy', to: spec({ files: [file('/etc/a', 'a'), file('/etc/containers/registries.conf', 'x\n')], units: [{ name: 'u.service', contents: '[Service]\n' }] }), policy: { units: [{ name: 'u.service', actions: [{ type: 'DaemonReload' }] }] }, reboot: false, drain: false, post: ['DaemonReload'] },
    { name: 'an explicit Drain policy drains without a reboot', to: spec({ files: [file('/etc/a', 'b'), file('/etc/containers/registries.conf', 'x\n')] }), policy: { files: [{ path: '/etc/a', actions: [{ type: 'Drain' }] }] }, reboot: false, drain: true, post: [] },
  ];
  for (const row of rows) {
    const plan = planActions(diffConfigs(before, row.to), row.policy);
    assert.equal(plan.reboot, row.reboot, `${row.name}: reboot (${plan.reasons.join('; ')})`);
    assert.equal(plan.drain, row.drain, `${row.name}: drain`);
    if (row.post) assert.deepEqual(plan.postActions.map((a) => a.type), row.post, `${row.name}: post actions`);
  }
});

test('diffConfigs: no change is an empty plan; removed files are listed', () => {
  const a = spec({ files: [file('/etc/a', 'a')] });
  assert.deepEqual(planActions(diffConfigs(a, a)), { reboot: false, drain: false, postActions: [], reasons: [] });
  const d = diffConfigs(a, spec());
  assert.deepEqual(d.paths.map((p) => [p.path, p.change]), [['/etc/a', 'removed']]);
});
