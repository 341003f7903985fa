// Ignition's files stage, in bosun: writes a rendered config into a machine root in Ignition's
// order and with its defaults — users and groups; then files, directories and links (parents
// before children; missing parents 0755; files 0644 and directories 0755 unless `mode` says
// otherwise; `overwrite` false refuses contents for an existing node, even the same; `append`
// after the contents; owners by id or by name from the root's passwd/group); then systemd units
// (contents at /etc/systemd/system/<unit>, dropins in <unit>.d/, masks as links to /dev/null,
// `enabled` as lines of /etc/systemd/system-preset/20-ignition.preset); finally Ignition's
// /etc/.ignition-result.json.
import { rfc3339 } from '../../common/time.js';
import { appendFileSync, chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import { join } from 'node:path';
import type { DirectoryEntry, FileEntry, IgnitionConfig, LinkEntry, NodeBase, Unit } from '../types.js';
import { fetchResource, ResourceError } from './resource.js';
import { ensureGroups, ensureUsers, resolveOwner } from './passwd.js';
import { chownIfRoot, FilesStageError, inRoot, mkParents } from './root-path.js';

export interface FilesStageOptions {
  /** The booting machine's boot ID, recorded in the result file as Ignition records its own. */
  bootId: string;
  /** PEM CAs for https file sources (the config's certificateAuthorities). */
  cas: string[];
  signal?: AbortSignal;
  now?: () => Date;
}

type Entry = { kind: 'file'; node: FileEntry } | { kind: 'directory'; node: DirectoryEntry } | { kind: 'link'; node: LinkEntry };

export async function filesStage(config: IgnitionConfig, root: string, opts: FilesStageOptions): Promise<void> {
  ensureGroups(root, config.passwd?.groups ?? []);
  ensureUsers(root, config.passwd?.users ?? []);

  const entries: Entry[] = [
    ...(config.storage?.directories ?? []).map((node) => ({ kind: 'directory' as const, node })),
    ...(config.storage?.files ?? []).map((node) => ({ kind: 'file' as const, node })),
    ...(config.storage?.links ?? []).map((node) => ({ kind: 'link' as const, node })),
  ];
  // Shallower paths first, so a directory's mode and owner are set before what goes in it.
  entries.sort((a, b) => depth(a.node.path) - depth(b.node.path));
  for (const e of entries) {
    try {
      if (e.kind === 'file') await writeFile(root, e.node, opts);
      else if (e.kind === 'directory') writeDirectory(root, e.node);
      else writeLink(root, e.node);
    } catch (err) {
      if (err instanceof ResourceError) throw new FilesStageError(`writing ${e.kind} "${e.node.path}": ${err.message}`);
      throw err;
    }
  }

  const presets: string[] = [];
  for (const unit of config.systemd?.units ?? []) writeUnit(root, unit, presets);
  if (presets.length > 0) {
    const file = inRoot(root, '/etc/systemd/system-preset/20-ignition.preset');
    mkParents(root, file);
    writeFileSync(file, presets.map((l) => `${l}\n`).join(''), { mode: 0o644 });
  }

  const result = inRoot(root, '/etc/.ignition-result.json');
  mkParents(root, result);
  const date = rfc3339(opts.now?.() ?? new Date());
  writeFileSync(result, `${JSON.stringify({ provisioningBootID: opts.bootId, provisioningDate: date, userConfigProvided: true }, null, 2)}\n`, { mode: 0o600 });
}

function depth(path: string): number {
  return path.split('/').filter(Boolean).length;
}

function existing(target: string): Stats | undefined {
  try { return lstatSync(target); } catch { return undefined; }
}

function setOwner(root: string, target: string, node: NodeBase, followLinks = true): void {
  const uid = resolveOwner(root, node.user, 'user', node.path);
  const gid = resolveOwner(root, node.group, 'group', node.path);
  if (uid !== undefined || gid !== undefined) chownIfRoot(target, uid ?? 0, gid ?? 0, followLinks);
}

async function writeFile(root: string, f: FileEntry, opts: FilesStageOptions): Promise<void> {
  const target = inRoot(root, f.path);
  mkParents(root, target);
  const before = existing(target);
  const hasContents = f.contents?.source !== undefined && f.contents?.source !== null;
  if (before) {
    if (f.overwrite) rmSync(target, { recursive: true, force: true });
    else if (!before.isFile()) throw new FilesStageError(`file "${f.path}": a ${before.isDirectory() ? 'directory' : 'link'} is already there and overwrite is false`);
    // Ignition refuses even identical contents: only overwrite replaces a file.
    else if (hasContents) throw new FilesStageError(`file "${f.path}": a file exists there already and overwrite is false`);
  }
  const keep = before && !f.overwrite;
  if (!keep) writeFileSync(target, hasContents ? await fetchResource(f.contents!, { cas: opts.cas, signal: opts.signal }) : Buffer.alloc(0));
  for (const r of f.append ?? []) appendFileSync(target, await fetchResource(r, { cas: opts.cas, signal: opts.signal }));
  chmodSync(target, f.mode ?? (keep ? before!.mode & 0o7777 : 0o644));
  setOwner(root, target, f);
}

function writeDirectory(root: string, d: DirectoryEntry): void {
  const target = inRoot(root, d.path);
  mkParents(root, target);
  const before = existing(target);
  if (before && !before.isDirectory()) {
    if (!d.overwrite) throw new FilesStageError(`directory "${d.path}": a ${before.isFile() ? 'file' : 'link'} is already there and overwrite is false`);
    rmSync(target, { force: true });
  }
  if (!existsSync(target)) mkdirSync(target, { mode: 0o755 });
  chmodSync(target, d.mode ?? 0o755);
  setOwner(root, target, d);
}

function writeLink(root: string, l: LinkEntry): void {
  const target = inRoot(root, l.path);
  mkParents(root, target);
  const before = existing(target);
  if (before) {
    const same = !l.hard && before.isSymbolicLink() && readLinkSafe(target) === l.target;
    if (same) { setOwner(root, target, l, false); return; }
    if (!l.overwrite) throw new FilesStageError(`link "${l.path}": something is already there and overwrite is false`);
    rmSync(target, { recursive: true, force: true });
  }
  if (l.hard) linkSync(inRoot(root, l.target!), target);
  else symlinkSync(l.target!, target);
  setOwner(root, target, l, false);
}

function readLinkSafe(target: string): string | undefined {
  try { return readlinkSync(target); } catch { return undefined; }
}

function writeUnit(root: string, unit: Unit, presets: string[]): void {
  const path = `/etc/systemd/system/${unit.name}`;
  const target = inRoot(root, path);
  if (unit.contents != null && !unit.mask) {
    mkParents(root, target);
    rmSync(target, { force: true });
    writeFileSync(target, unit.contents, { mode: 0o644 });
  }
  for (const dropin of unit.dropins ?? []) {
    if (dropin.contents == null) continue;
    const file = inRoot(root, `${path}.d/${dropin.name}`);
    mkParents(root, file);
    writeFileSync(file, dropin.contents, { mode: 0o644 });
  }
  if (unit.mask) {
    mkParents(root, target);
    rmSync(target, { force: true });
    symlinkSync('/dev/null', target);
  } else if (unit.mask === false && existing(target)?.isSymbolicLink() && readLinkSafe(target) === '/dev/null') {
    rmSync(target);
  }
  if (unit.enabled === true) presets.push(`enable ${unit.name}`);
  if (unit.enabled === false) {
    presets.push(`disable ${unit.name}`);
    removeEnablementLinks(root, unit.name);
  }
}

/** Disabling removes what `systemctl enable` would have linked (…/<target>.wants/<unit>). */
function removeEnablementLinks(root: string, name: string): void {
  const dir = inRoot(root, '/etc/systemd/system');
  if (!existsSync(dir)) return;
  for (const sub of readdirSync(dir)) {
    if (sub.endsWith('.wants') || sub.endsWith('.requires')) rmSync(join(dir, sub, name), { force: true });
  }
}
