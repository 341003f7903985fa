// What changes on a node going from one rendered MachineConfig to another: the paths whose
// wanted state differs (files, units, ssh keys; see managed.ts), the `core` user's password, and
// the MachineConfig fields that only a reboot applies (kernel arguments, kernel type, extensions,
// OS image). Pure.
import { ignitionConfigOf, type MachineConfigSpec } from '../controller/types.js';
import { CORE_USER, sameValue } from '../controller/validation.js';
import { managedEntries, sameEntry, type ManagedEntry } from './managed.js';

export interface PathChange {
  path: string;
  change: 'added' | 'changed' | 'removed';
  source: ManagedEntry['source'];
  before?: ManagedEntry;
  after?: ManagedEntry;
}

export interface ConfigDiff {
  /** Files, unit files and links, and the ssh keys file whose wanted state changed. */
  paths: PathChange[];
  /** Units whose definition (contents, drop-ins, mask, enablement) changed, by name. */
  units: string[];
  sshKeys: boolean;
  passwordHash: boolean;
  /** The `core` user's password hash in the new config: `*` (no password) when it sets none, as OpenShift's daemon gives it. */
  corePasswordHash: string;
  kernelArguments: { add: string[]; remove: string[] };
  kernelType: boolean;
  extensions: boolean;
  osImageURL: boolean;
}

function passwordHash(spec: MachineConfigSpec | undefined): string | undefined {
  return ignitionConfigOf(spec).passwd?.users?.find((u) => u.name === CORE_USER)?.passwordHash || undefined;
}

function unitsByName(spec: MachineConfigSpec | undefined) {
  return new Map((ignitionConfigOf(spec).systemd?.units ?? []).map((u) => [u.name, u] as const));
}

export function diffConfigs(from: MachineConfigSpec | undefined, to: MachineConfigSpec | undefined): ConfigDiff {
  const before = managedEntries(from);
  const after = managedEntries(to);
  const paths: PathChange[] = [];
  for (const [path, a] of after) {
    const b = before.get(path);
    if (!b) paths.push({ path, change: 'added', source: a.source, after: a });
    else if (!sameEntry(a, b)) paths.push({ path, change: 'changed', source: a.source, before: b, after: a });
  }
  for (const [path, b] of before) if (!after.has(path)) paths.push({ path, change: 'removed', source: b.source, before: b });
  paths.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));

  const oldUnits = unitsByName(from);
  const newUnits = unitsByName(to);
  const units = [...new Set([...oldUnits.keys(), ...newUnits.keys()])].filter((n) => !sameValue(oldUnits.get(n), newUnits.get(n))).sort();

  const oldArgs = from?.kernelArguments ?? [];
  const newArgs = to?.kernelArguments ?? [];
  return {
    paths,
    units,
    sshKeys: paths.some((p) => p.source === 'sshkey'),
    passwordHash: passwordHash(from) !== passwordHash(to),
    corePasswordHash: passwordHash(to) ?? '*',
    kernelArguments: { add: newArgs.filter((a) => !oldArgs.includes(a)), remove: oldArgs.filter((a) => !newArgs.includes(a)) },
    kernelType: (from?.kernelType || 'default') !== (to?.kernelType || 'default'),
    extensions: !sameValue([...(from?.extensions ?? [])].sort(), [...(to?.extensions ?? [])].sort()),
    osImageURL: (from?.osImageURL ?? '') !== (to?.osImageURL ?? ''),
  };
}

/** Nothing on the node changes. */
export function isEmptyDiff(d: ConfigDiff): boolean {
  return d.paths.length === 0 && d.units.length === 0 && !d.passwordHash && d.kernelArguments.add.length === 0 && d.kernelArguments.remove.length === 0 && !d.kernelType && !d.extensions && !d.osImageURL;
}

/** The diff a forced update writes: every path of `to` rewritten (originals kept only for paths `from` did not manage), and what `from` had alone restored. */
export function forcedDiff(from: MachineConfigSpec | undefined, to: MachineConfigSpec | undefined): ConfigDiff {
  const diff = diffConfigs(from, to);
  const before = managedEntries(from);
  const changed = new Set(diff.paths.map((p) => p.path));
  for (const [path, a] of managedEntries(to)) {
    if (!changed.has(path)) diff.paths.push({ path, change: 'changed', source: a.source, before: before.get(path), after: a });
  }
  diff.paths.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0));
  return diff;
}
