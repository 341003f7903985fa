// Users and groups in a machine root, as Ignition's files stage makes them with shadow's
// useradd/groupadd `--root`: entries in `<root>/etc/passwd` and `<root>/etc/group`, a home
// directory, and ssh keys where Ignition writes them (`~/.ssh/authorized_keys.d/ignition`).
// Defaults are useradd's for a root without login.defs: uid/gid from 1000 up, primary group 100
// ("users"), home /home/<name>, password "*" (no password; groups too), shell /bin/bash.
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { Group, User } from '../types.js';
import { chownIfRoot, FilesStageError, inRoot, mkParents } from './root-path.js';

interface PasswdEntry { name: string; password: string; uid: number; gid: number; gecos: string; home: string; shell: string }
interface GroupEntry { name: string; password: string; gid: number; members: string[] }

const USERS_GID = 100;
const FIRST_ID = 1000;
const FIRST_SYSTEM_ID = 999;

function readLines(file: string): string[] {
  return existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : [];
}

function readPasswd(root: string): PasswdEntry[] {
  return readLines(join(root, 'etc/passwd')).map((l) => {
    const [name, password, uid, gid, gecos, home, shell] = l.split(':');
    return { name, password, uid: Number(uid), gid: Number(gid), gecos, home, shell };
  });
}

function writePasswd(root: string, entries: PasswdEntry[]): void {
  mkdirSync(join(root, 'etc'), { recursive: true, mode: 0o755 });
  writeFileSync(join(root, 'etc/passwd'), entries.map((e) => [e.name, e.password, e.uid, e.gid, e.gecos, e.home, e.shell].join(':') + '\n').join(''), { mode: 0o644 });
}

function readGroups(root: string): GroupEntry[] {
  return readLines(join(root, 'etc/group')).map((l) => {
    const [name, password, gid, members] = l.split(':');
    return { name, password, gid: Number(gid), members: members ? members.split(',') : [] };
  });
}

function writeGroups(root: string, entries: GroupEntry[]): void {
  mkdirSync(join(root, 'etc'), { recursive: true, mode: 0o755 });
  writeFileSync(join(root, 'etc/group'), entries.map((e) => `${e.name}:${e.password}:${e.gid}:${e.members.join(',')}\n`).join(''), { mode: 0o644 });
}

function nextId(used: number[], system: boolean): number {
  const taken = new Set(used);
  if (system) { let id = FIRST_SYSTEM_ID; while (taken.has(id)) id--; return id; }
  let id = FIRST_ID;
  while (taken.has(id)) id++;
  return id;
}

export function ensureGroups(root: string, groups: Group[]): void {
  if (groups.length === 0) return;
  let entries = readGroups(root);
  for (const g of groups) {
    if (g.shouldExist === false) { entries = entries.filter((e) => e.name !== g.name); continue; }
    const existing = entries.find((e) => e.name === g.name);
    if (existing) {
      if (g.gid != null) existing.gid = g.gid;
      if (g.passwordHash != null) existing.password = g.passwordHash;
      continue;
    }
    entries.push({ name: g.name, password: g.passwordHash ?? '*', gid: g.gid ?? nextId(entries.map((e) => e.gid), g.system === true), members: [] });
  }
  writeGroups(root, entries);
}

export function ensureUsers(root: string, users: User[]): void {
  if (users.length === 0) return;
  let entries = readPasswd(root);
  const groups = readGroups(root);
  let groupsChanged = false;
  const gidOf = (user: string, group: string): number => {
    const byName = groups.find((g) => g.name === group);
    if (byName) return byName.gid;
    if (/^\d+$/.test(group)) return Number(group);
    throw new FilesStageError(`user "${user}": group "${group}" does not exist`);
  };
  for (const u of users) {
    if (u.shouldExist === false) { entries = entries.filter((e) => e.name !== u.name); continue; }
    let entry = entries.find((e) => e.name === u.name);
    if (!entry) {
      entry = {
        name: u.name, password: u.passwordHash ?? '*', uid: u.uid ?? nextId(entries.map((e) => e.uid), u.system === true),
        gid: u.primaryGroup ? gidOf(u.name, u.primaryGroup) : USERS_GID, gecos: u.gecos ?? '', home: u.homeDir ?? `/home/${u.name}`, shell: u.shell ?? '/bin/bash',
      };
      entries.push(entry);
      if (!u.noCreateHome) {
        const home = inRoot(root, entry.home);
        mkParents(root, home);
        mkdirSync(home, { recursive: true, mode: 0o755 });
        chownIfRoot(home, entry.uid, entry.gid);
      }
    } else {
      if (u.uid != null) entry.uid = u.uid;
      if (u.passwordHash != null) entry.password = u.passwordHash;
      if (u.gecos != null) entry.gecos = u.gecos;
      if (u.homeDir != null) entry.home = u.homeDir;
      if (u.shell != null) entry.shell = u.shell;
      if (u.primaryGroup != null) entry.gid = gidOf(u.name, u.primaryGroup);
    }
    for (const name of u.groups ?? []) {
      const g = groups.find((x) => x.name === name);
      if (!g) throw new FilesStageError(`user "${u.name}": supplementary group "${name}" does not exist`);
      if (!g.members.includes(u.name)) { g.members.push(u.name); groupsChanged = true; }
    }
    if (u.sshAuthorizedKeys?.length) writeAuthorizedKeys(root, entry, u.sshAuthorizedKeys);
  }
  writePasswd(root, entries);
  if (groupsChanged) writeGroups(root, groups);
}

/** `~/.ssh/authorized_keys.d/ignition`, mode 0600 in 0700 directories, owned by the user. */
function writeAuthorizedKeys(root: string, user: PasswdEntry, keys: string[]): void {
  const ssh = join(inRoot(root, user.home), '.ssh');
  const dir = join(ssh, 'authorized_keys.d');
  mkParents(root, ssh);
  for (const d of [ssh, dir]) {
    mkdirSync(d, { recursive: true, mode: 0o700 });
    chmodSync(d, 0o700);
    chownIfRoot(d, user.uid, user.gid);
  }
  const file = join(dir, 'ignition');
  writeFileSync(file, keys.map((k) => `${k}\n`).join(''), { mode: 0o600 });
  chmodSync(file, 0o600);
  chownIfRoot(file, user.uid, user.gid);
}

/** uid/gid for an Ignition owner ({id} or {name}), looked up in the root's passwd/group. */
export function resolveOwner(root: string, owner: { id?: number | null; name?: string | null } | null | undefined, kind: 'user' | 'group', path: string): number | undefined {
  if (!owner) return undefined;
  if (owner.id != null) return owner.id;
  if (!owner.name) return undefined;
  const found = kind === 'user' ? readPasswd(root).find((e) => e.name === owner.name)?.uid : readGroups(root).find((e) => e.name === owner.name)?.gid;
  if (found === undefined) throw new FilesStageError(`${path}: ${kind} "${owner.name}" does not exist in the root`);
  return found;
}
