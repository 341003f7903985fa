// The daemon's disk side on a real directory (src/mco/daemon/writer.ts, validate.ts): originals
// kept and restored, "no original" markers, validation messages as OpenShift words them, and a
// failing write rolled back.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { diffConfigs } from '../../src/mco/daemon/diff.js';
import { writeDiff, WriteError } from '../../src/mco/daemon/writer.js';
import { rootReader, validateOnDisk } from '../../src/mco/daemon/validate.js';
import { encodeDataUrl } from '../../src/ignition/data-url.js';
import type { MachineConfigSpec } from '../../src/mco/controller/types.js';

const file = (path: string, text: string, mode = 0o644) => ({ path, mode, overwrite: true, contents: { source: encodeDataUrl(text) } });
const spec = (files: object[], extra: Partial<MachineConfigSpec> = {}, units: object[] = []): MachineConfigSpec => ({ config: { ignition: { version: '3.2.0' }, storage: { files }, systemd: { units } }, ...extra });
const EMPTY = spec([]);

function root(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcd-writer-'));
  mkdirSync(join(dir, 'etc'), { recursive: true });
  writeFileSync(join(dir, 'etc/existing'), 'original\n', { mode: 0o600 });
  writeFileSync(join(dir, 'etc/blocked'), 'a file where a directory is wanted\n');
  return dir;
}

test('write keeps originals, validates, reports drift in OpenShift\'s words, and restores on removal', (t) => {
  const dir = root();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const c1 = spec([file('/etc/existing', 'managed\n'), file('/etc/new', 'new\n', 0o640)], { kernelArguments: ['nosmt'] }, [{ name: 'x.service', enabled: true, contents: '[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n' }]);
  writeDiff(dir, diffConfigs(EMPTY, c1));
  assert.equal(readFileSync(join(dir, 'etc/existing'), 'utf8'), 'managed\n');
  assert.equal(readFileSync(join(dir, 'etc/machine-config-daemon/orig/etc/existing.mcdorig'), 'utf8'), 'original\n');
  assert.ok(existsSync(join(dir, 'etc/machine-config-daemon/noorig/etc/new.mcdnoorig')));
  assert.equal(statSync(join(dir, 'etc/new')).mode & 0o777, 0o640);
  assert.equal(readFileSync(join(dir, 'etc/kernel/cmdline'), 'utf8'), 'nosmt\n');
  // Before the boot the running kernel does not have the argument yet.
  assert.equal(validateOnDisk(c1, rootReader(dir)), 'missing expected kernel arguments: nosmt');
  mkdirSync(join(dir, 'proc'));
  writeFileSync(join(dir, 'proc/cmdline'), 'ro nosmt\n');
  assert.equal(validateOnDisk(c1, rootReader(dir)), undefined);

  writeFileSync(join(dir, 'etc/new'), 'edited\n');
  assert.equal(validateOnDisk(c1, rootReader(dir)), 'content mismatch for file "/etc/new"');
  writeFileSync(join(dir, 'etc/new'), 'new\n');
  chmodSync(join(dir, 'etc/new'), 0o644);
  assert.equal(validateOnDisk(c1, rootReader(dir)), 'mode mismatch for file: "/etc/new"; expected: -rw-r-----/416/0640; received: -rw-r--r--/420/0644');
  chmodSync(join(dir, 'etc/new'), 0o640);
  assert.equal(readFileSync(join(dir, 'etc/systemd/system/x.service'), 'utf8').includes('ExecStart'), true);
  assert.equal(readlinkSync(join(dir, 'etc/systemd/system/multi-user.target.wants/x.service')), '/etc/systemd/system/x.service', 'enabled as systemctl enable links it');

  writeDiff(dir, diffConfigs(c1, EMPTY));
  assert.equal(readFileSync(join(dir, 'etc/existing'), 'utf8'), 'original\n');
  assert.equal(statSync(join(dir, 'etc/existing')).mode & 0o777, 0o600);
  assert.equal(existsSync(join(dir, 'etc/new')), false);
  assert.equal(existsSync(join(dir, 'etc/machine-config-daemon/orig/etc/existing.mcdorig')), false);
  assert.equal(existsSync(join(dir, 'etc/machine-config-daemon/noorig/etc/new.mcdnoorig')), false);
  assert.equal(existsSync(join(dir, 'etc/systemd/system/x.service')), false);
  assert.equal(readFileSync(join(dir, 'etc/kernel/cmdline'), 'utf8'), '\n');
});

test('a write that fails part-way undoes what it wrote and says where it failed', (t) => {
  const dir = root();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bad = spec([file('/etc/a-first', 'x\n'), file('/etc/blocked/inner', 'y\n'), file('/etc/existing', 'z\n')]);
  assert.throws(() => writeDiff(dir, diffConfigs(EMPTY, bad)), (e: unknown) => e instanceof WriteError && /writing "\/etc\/blocked\/inner"/.test(e.message) && /rolled back 1 path/.test(e.message));
  assert.equal(existsSync(join(dir, 'etc/a-first')), false);
  assert.equal(existsSync(join(dir, 'etc/machine-config-daemon/noorig/etc/a-first.mcdnoorig')), false);
  assert.equal(readFileSync(join(dir, 'etc/existing'), 'utf8'), 'original\n');
});
