// What a rendered MachineConfig puts on a node's disk, as one list of paths: its files (decoded,
// with their modes), its systemd units (contents at /etc/systemd/system/<unit>, drop-ins in
// <unit>.d/, a mask as a link to /dev/null, `enabled` as the <target>.wants link `systemctl
// enable` makes from the unit's [Install] WantedBy=, `enabled: false` as that link absent), and
// the `core` user's ssh keys at /home/core/.ssh/authorized_keys.d/ignition (0600, the user's and
// its primary group's). The daemon's
// diff, writer and validation all work on this list, so they agree on what "the config" is.
// Pure.
import { BosunError } from '../../common/errors.js';
import { decodeDataUrl } from '../../ignition/data-url.js';
import type { FileEntry, Unit } from '../../ignition/types.js';
import { ignitionConfigOf, type MachineConfigSpec } from '../controller/types.js';
import { CORE_USER } from '../controller/validation.js';
import { gunzipSync } from 'node:zlib';

export const UNIT_DIR = '/etc/systemd/system';
export const CORE_SSH_KEYS = `/home/${CORE_USER}/.ssh/authorized_keys.d/ignition`;

/** What one path should be. */
export type ManagedEntry =
  | { path: string; kind: 'file'; data: Buffer; mode: number; source: 'file' | 'unit' | 'sshkey'; user?: string; group?: string }
  | { path: string; kind: 'link'; target: string; source: 'unit'; enablement?: boolean }
  | { path: string; kind: 'absent'; source: 'unit'; enablement: true };

export class ManagedConfigError extends BosunError {
  constructor(message: string) {
    super('ConfigNotWritable', message);
  }
}

/** The bytes of an Ignition file's contents (data URLs only, optionally gzip-compressed). */
export function fileContents(f: FileEntry): Buffer {
  const source = f.contents?.source;
  if (source === undefined || source === null) return Buffer.alloc(0);
  if (!source.startsWith('data:')) throw new ManagedConfigError(`file "${f.path}": the machine-config daemon only writes inline (data:) contents, not ${source.split(':')[0]}: sources`);
  const raw = decodeDataUrl(source);
  return f.contents?.compression === 'gzip' ? gunzipSync(raw) : raw;
}

/** The targets a unit's [Install] section links it into (`systemctl enable`); multi-user.target when it has none we can read. */
export function wantedBy(unit: Unit): string[] {
  const targets: string[] = [];
  let install = false;
  for (const line of (unit.contents ?? '').split(/\r?\n/)) {
    const t = line.trim();
    if (/^\[.*\]$/.test(t)) install = t === '[Install]';
    const m = install ? /^(WantedBy|RequiredBy)\s*=\s*(.*)$/.exec(t) : null;
    if (m) for (const target of m[2].split(/\s+/).filter(Boolean)) targets.push(`${target}.${m[1] === 'WantedBy' ? 'wants' : 'requires'}`);
  }
  return targets.length ? targets : ['multi-user.target.wants'];
}

function unitEntries(unit: Unit): ManagedEntry[] {
  const path = `${UNIT_DIR}/${unit.name}`;
  const out: ManagedEntry[] = [];
  if (unit.mask) out.push({ path, kind: 'link', target: '/dev/null', source: 'unit' });
  else if (unit.contents != null) out.push({ path, kind: 'file', data: Buffer.from(unit.contents), mode: 0o644, source: 'unit' });
  for (const d of unit.dropins ?? []) {
    if (d.contents != null) out.push({ path: `${path}.d/${d.name}`, kind: 'file', data: Buffer.from(d.contents), mode: 0o644, source: 'unit' });
  }
  if (!unit.mask && unit.enabled === true) for (const dir of wantedBy(unit)) out.push({ path: `${UNIT_DIR}/${dir}/${unit.name}`, kind: 'link', target: path, source: 'unit', enablement: true });
  if (!unit.mask && unit.enabled === false) for (const dir of wantedBy(unit)) out.push({ path: `${UNIT_DIR}/${dir}/${unit.name}`, kind: 'absent', source: 'unit', enablement: true });
  return out;
}

/** Every path the config manages, by path (later entries for the same path win, as Ignition's order). */
export function managedEntries(spec: MachineConfigSpec | undefined): Map<string, ManagedEntry> {
  const config = ignitionConfigOf(spec);
  const out = new Map<string, ManagedEntry>();
  for (const f of config.storage?.files ?? []) {
    out.set(f.path, { path: f.path, kind: 'file', data: fileContents(f), mode: f.mode ?? 0o644, source: 'file', ...(f.user?.name ? { user: f.user.name } : {}), ...(f.group?.name ? { group: f.group.name } : {}) });
  }
  for (const unit of config.systemd?.units ?? []) for (const e of unitEntries(unit)) out.set(e.path, e);
  const keys = sshKeys(spec);
  if (keys.length) out.set(CORE_SSH_KEYS, { path: CORE_SSH_KEYS, kind: 'file', data: Buffer.from(keys.map((k) => `${k}\n`).join('')), mode: 0o600, source: 'sshkey', user: CORE_USER });
  return out;
}

/** The `core` user's ssh keys in the config. */
export function sshKeys(spec: MachineConfigSpec | undefined): string[] {
  const config = ignitionConfigOf(spec);
  return (config.passwd?.users ?? []).filter((u) => u.name === CORE_USER).flatMap((u) => u.sshAuthorizedKeys ?? []);
}

/** Two entries describe the same thing on disk. */
export function sameEntry(a: ManagedEntry | undefined, b: ManagedEntry | undefined): boolean {
  if (!a || !b) return a === b;
  if (a.kind !== b.kind) return false;
  if (a.kind === 'file' && b.kind === 'file') return a.mode === b.mode && a.data.equals(b.data) && a.user === b.user && a.group === b.group;
  if (a.kind === 'link' && b.kind === 'link') return a.target === b.target;
  return true;
}

/** `-rw-r--r--/420/0644`, as OpenShift's daemon shows a mode in a mismatch. */
export function describeMode(mode: number): string {
  const bits = 'rwxrwxrwx';
  let text = '-';
  for (let i = 0; i < 9; i++) text += mode & (1 << (8 - i)) ? bits[i] : '-';
  return `${text}/${mode}/0${(mode & 0o7777).toString(8)}`;
}
