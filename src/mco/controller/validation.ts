// What the render controller checks before a pool may move to a new rendered config:
// - each MachineConfig on its own (validateMachineConfig): its Ignition parses and validates at
//   its declared version (so a version newer than 3.5.0 is refused; what Ignition only warns
//   about passes), no setuid/setgid/sticky file modes (the MCO's own rule, stricter than
//   Ignition's warning), a known kernelType, supported extensions;
// - the change from the pool's current rendered config to the new one (unreconcilableChanges):
//   only what the machine-config daemon can apply to a running node may change — files (not
//   `append`), systemd units, the `core` user's sshAuthorizedKeys and passwordHash, and the
//   MachineConfig fields kernelArguments, extensions, kernelType and osImageURL. The Ignition
//   section, groups, other users, disks, raid, filesystems, luks, directories, links, Ignition's
//   own kernelArguments section and fips are fixed at install time.
// Every problem names the MachineConfig (when known) and the field.
import { isError, validateConfig } from '../../ignition/validate.js';
import { isEmptyValue } from '../../ignition/schema.js';
import type { FileEntry, User } from '../../ignition/types.js';
import { ignitionConfigOf, type MachineConfig, type MachineConfigSpec } from './types.js';

export interface SpecProblem {
  /** Field path from the MachineConfig's spec, e.g. `spec.config.storage.files[0].mode`. */
  field: string;
  message: string;
}

export const KERNEL_TYPES = ['default', 'realtime', '64k-pages'] as const;
/** RHCOS extensions OpenShift accepts in spec.extensions. */
export const SUPPORTED_EXTENSIONS = ['wasm', 'ipsec', 'usbguard', 'kerberos', 'kernel-devel', 'sandboxed-containers', 'sysstat'] as const;
/** The one user whose ssh keys and password the daemon manages on a running node. */
export const CORE_USER = 'core';
const CORE_USER_MUTABLE_FIELDS = new Set(['name', 'sshAuthorizedKeys', 'passwordHash']);
const SPECIAL_MODE_BITS = 0o7000;

/** Problems in one MachineConfig's spec, independent of any pool. */
export function validateMachineConfig(mc: MachineConfig): SpecProblem[] {
  const problems: SpecProblem[] = [];
  const spec = mc.spec ?? {};
  if (spec.config !== undefined && spec.config !== null) {
    // Ignition's warnings (unused keys, ...) never stop a render; the render controller reports them.
    const ignitionProblems = validateConfig(spec.config).filter(isError);
    problems.push(...ignitionProblems.map((p) => ({ field: p.path ? `spec.config.${p.path}` : 'spec.config', message: p.message })));
    if (ignitionProblems.length === 0) {
      (ignitionConfigOf(spec).storage?.files ?? []).forEach((f, i) => {
        if (typeof f.mode === 'number' && (f.mode & SPECIAL_MODE_BITS) !== 0) {
          problems.push({ field: `spec.config.storage.files[${i}].mode`, message: `${f.path}: mode 0${f.mode.toString(8)} sets setuid, setgid or sticky bits, which MachineConfigs may not` });
        }
      });
    }
  }
  if (spec.kernelType && !(KERNEL_TYPES as readonly string[]).includes(spec.kernelType)) {
    problems.push({ field: 'spec.kernelType', message: `unknown kernelType "${spec.kernelType}" (expected one of ${KERNEL_TYPES.join(', ')})` });
  }
  (spec.extensions ?? []).forEach((e, i) => {
    if (!(SUPPORTED_EXTENSIONS as readonly string[]).includes(e)) {
      problems.push({ field: `spec.extensions[${i}]`, message: `unsupported extension "${e}" (supported: ${SUPPORTED_EXTENSIONS.join(', ')})` });
    }
  });
  return problems;
}

/** Changes from `current` to `next` (both rendered specs) that a running node cannot apply. */
export function unreconcilableChanges(current: MachineConfigSpec | undefined, next: MachineConfigSpec | undefined): SpecProblem[] {
  const out: SpecProblem[] = [];
  const a = ignitionConfigOf(current);
  const b = ignitionConfigOf(next);

  const { version: _va, ...ignitionA } = a.ignition ?? { version: '' };
  const { version: _vb, ...ignitionB } = b.ignition ?? { version: '' };
  if (!sameValue(ignitionA, ignitionB)) out.push({ field: 'spec.config.ignition', message: 'the Ignition section (config merge/replace, proxy, security, timeouts) only applies at first boot and cannot change on a running node' });

  if (!sameValue(a.passwd?.groups, b.passwd?.groups)) out.push({ field: 'spec.config.passwd.groups', message: 'groups cannot be changed on a running node' });
  if (!sameValue(a.passwd?.users, b.passwd?.users)) out.push(...userProblems(a.passwd?.users ?? [], b.passwd?.users ?? []));

  for (const section of ['disks', 'raid', 'filesystems', 'luks', 'directories', 'links'] as const) {
    if (!sameValue(a.storage?.[section], b.storage?.[section])) {
      out.push({ field: `spec.config.storage.${section}`, message: `storage ${section} cannot be changed on a running node${section === 'directories' || section === 'links' ? ' (only files and systemd units can)' : ''}` });
    }
  }
  const oldFiles = new Map((a.storage?.files ?? []).map((f) => [f.path, f] as const));
  (b.storage?.files ?? []).forEach((f: FileEntry, i) => {
    if (!isEmptyValue(f.append) && !sameValue(oldFiles.get(f.path), f)) {
      out.push({ field: `spec.config.storage.files[${i}].append`, message: `${f.path}: appending to a file cannot be applied to a running node; give the whole contents instead` });
    }
  });
  if (!sameValue(a.kernelArguments, b.kernelArguments)) out.push({ field: 'spec.config.kernelArguments', message: 'Ignition kernelArguments cannot be changed on a running node; use spec.kernelArguments' });
  if (Boolean(current?.fips) !== Boolean(next?.fips)) out.push({ field: 'spec.fips', message: `fips cannot be switched ${next?.fips ? 'on' : 'off'} on a running cluster` });
  return out;
}

function userProblems(oldUsers: User[], newUsers: User[]): SpecProblem[] {
  const out: SpecProblem[] = [];
  if (oldUsers.some((u) => u.name === CORE_USER) && !newUsers.some((u) => u.name === CORE_USER)) {
    out.push({ field: 'spec.config.passwd.users', message: `user "${CORE_USER}" cannot be removed` });
  }
  const oldByName = new Map(oldUsers.map((u) => [u.name, u] as const));
  newUsers.forEach((u, i) => {
    if (sameValue(oldByName.get(u.name), u)) return;
    if (u.name !== CORE_USER) {
      out.push({ field: `spec.config.passwd.users[${i}]`, message: `user "${u.name}": only the "${CORE_USER}" user can be configured on a running node` });
      return;
    }
    const before = oldByName.get(u.name) ?? { name: u.name };
    const changed = new Set([...Object.keys(before), ...Object.keys(u)]
      .filter((k) => !CORE_USER_MUTABLE_FIELDS.has(k))
      .filter((k) => !sameValue((before as unknown as Record<string, unknown>)[k], (u as unknown as Record<string, unknown>)[k])));
    for (const k of [...changed].sort()) {
      out.push({ field: `spec.config.passwd.users[${i}].${k}`, message: `user "${CORE_USER}": only sshAuthorizedKeys and passwordHash can change on a running node` });
    }
  });
  oldUsers.filter((u) => u.name !== CORE_USER && !newUsers.some((n) => n.name === u.name)).forEach((u) => {
    out.push({ field: 'spec.config.passwd.users', message: `user "${u.name}" cannot be removed on a running node` });
  });
  return out;
}

/** Deep equality where absent, null and empty lists/objects are all the same thing. */
export function sameValue(a: unknown, b: unknown): boolean {
  if (isEmptyValue(a) && isEmptyValue(b)) return true;
  if (isEmptyValue(a) !== isEmptyValue(b)) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => sameValue(v, b[i]));
  }
  if (typeof a === 'object' && typeof b === 'object') {
    const ra = a as Record<string, unknown>;
    const rb = b as Record<string, unknown>;
    return [...new Set([...Object.keys(ra), ...Object.keys(rb)])].every((k) => sameValue(ra[k], rb[k]));
  }
  return a === b;
}
