// Users and groups in a machine root, as Ignition's files stage makes them with shadow's
// useradd/groupadd/usermod `--root`: entries in `<root>/etc/passwd` and `<root>/etc/group` — and,
// when the root has them (an RHCOS image does), in `/etc/shadow` and `/etc/gshadow`, the password
// then there and `x` in passwd and group — a home directory, and ssh keys where Ignition writes
// them (`~/.ssh/authorized_keys.d/ignition`). Defaults are useradd's for a root without
// login.defs: uid/gid one past the highest from 1000 up (1000 when none), primary group 100
// ("users"), home /home/<name>, password "*" (no password; groups too), shell /bin/bash; a shadow
// entry has only the date of the last change (today, in days since the epoch), as useradd and
// usermod write it.
import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync } from 'node:fs';
import { join } from 'node:path';
import type { Group, User } from '../types.js';
import { chownIfRoot, FilesStageError, inRoot, mkParents } from './root-path.js';

interface PasswdEntry { name: string; password: string; uid: number; gid: number; gecos: string; home: string; shell: string }
interface GroupEntry { name: string; password: string; gid: number; members: string[] }

const USERS_GID = 100;
const FIRST_ID = 1000;
const LAST_ID = 60000;
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

/** A shadow-style file (`/etc/shadow`, `/etc/gshadow`) as lines of fields; undefined when the root has none. */
function readShadowFile(root: string, name: 'shadow' | 'gshadow'): string[][] | undefined {
  const file = join(root, 'etc', name);
  return existsSync(file) ? readLines(file).map((l) => l.split(':')) : undefined;
}

/** Rewrites it in place, keeping its mode (0000 on RHCOS). */
function writeShadowFile(root: string, name: 'shadow' | 'gshadow', entries: string[][]): void {
  writeFileSync(join(root, 'etc', name), entries.map((e) => `${e.join(':')}\n`).join(''));
}

/** Days since the epoch: shadow's date of the last password change. */
function today(): string {
  return String(Math.floor(Date.now() / 86_400_000));
}

/** `usermod --password`: the hash in shadow with today's date of change when the root has a shadow file, otherwise in passwd. */
function setPassword(user: PasswdEntry, shadow: string[][] | undefined, hash: string): void {
  if (!shadow) { user.password = hash; return; }
  const entry = shadow.find((e) => e[0] === user.name);
  if (entry) { entry[1] = hash; entry[2] = today(); } else shadow.push([user.name, hash, today(), '', '', '', '', '', '']);
}

/** Sets an existing user's password hash in the root, as `usermod --password` does. */
export function setPasswordHash(root: string, name: string, hash: string): void {
  const users = readPasswd(root);
  const user = users.find((e) => e.name === name);
  if (!user) throw new FilesStageError(`user "${name}" does not exist in the root's /etc/passwd`);
  const shadow = readShadowFile(root, 'shadow');
  setPassword(user, shadow, hash);
  if (shadow) writeShadowFile(root, 'shadow', shadow);
  else writePasswd(root, users);
}

/** A user's entry in the root's /etc/passwd. */
export function lookupUser(root: string, name: string): { uid: number; gid: number; home: string } | undefined {
  return readPasswd(root).find((e) => e.name === name);
}

function nextId(used: number[], system: boolean): number {
  const taken = new Set(used);
  if (system) { let id = FIRST_SYSTEM_ID; while (taken.has(id)) id--; return id; }
  const next = Math.max(FIRST_ID - 1, ...used.filter((id) => id >= FIRST_ID && id <= LAST_ID)) + 1;
  if (next <= LAST_ID) return next;
  let id = FIRST_ID;
  while (taken.has(id)) id++;
  return id;
}

export function ensureGroups(root: string, groups: Group[]): void {
  if (groups.length === 0) return;
  let entries = readGroups(root);
  let gshadow = readShadowFile(root, 'gshadow');
  for (const g of groups) {
    if (g.shouldExist === false) {
      entries = entries.filter((e) => e.name !== g.name);
      gshadow = gshadow?.filter((e) => e[0] !== g.name);
      continue;
    }
    const existing = entries.find((e) => e.name === g.name);
    if (existing) {
      if (g.gid != null) existing.gid = g.gid;
      if (g.passwordHash != null) {
        const shadowed = gshadow?.find((e) => e[0] === g.name);
        if (shadowed) shadowed[1] = g.passwordHash;
        else existing.password = g.passwordHash;
      }
      continue;
    }
    const password = g.passwordHash ?? '*';
    entries.push({ name: g.name, password: gshadow ? 'x' : password, gid: g.gid ?? nextId(entries.map((e) => e.gid), g.system === true), members: [] });
    gshadow?.push([g.name, password, '', '']);
  }
  writeGroups(root, entries);
  if (gshadow) writeShadowFile(root, 'gshadow', gshadow);
}

export function ensureUsers(root: string, users: User[]): void {
  if (users.length === 0) return;
  let entries = readPasswd(root);
  const groups = readGroups(root);
  let shadow = readShadowFile(root, 'shadow');
  const gshadow = readShadowFile(root, 'gshadow');
  let groupsChanged = false;
  const gidOf = (user: string, group: string): number => {
    const byName = groups.find((g) => g.name === group);
    if (byName) return byName.gid;
    if (/^\d+$/.test(group)) return Number(group);
    throw new FilesStageError(`user "${user}": group "${group}" does not exist`);
  };
  for (const u of users) {
    if (u.shouldExist === false) {
      entries = entries.filter((e) => e.name !== u.name);
      shadow = shadow?.filter((e) => e[0] !== u.name);
      continue;
    }
    let entry = entries.find((e) => e.name === u.name);
    if (!entry) {
      const password = u.passwordHash ?? '*';
      entry = {
        name: u.name, password: shadow ? 'x' : password, uid: u.uid ?? nextId(entries.map((e) => e.uid), u.system === true),
        gid: u.primaryGroup ? gidOf(u.name, u.primaryGroup) : USERS_GID, gecos: u.gecos ?? '', home: u.homeDir ?? `/home/${u.name}`, shell: u.shell ?? '/bin/bash',
      };
      entries.push(entry);
      shadow?.push([u.name, password, today(), '', '', '', '', '', '']);
      if (!u.noCreateHome) {
        const home = inRoot(root, entry.home);
        mkParents(root, home);
        mkdirSync(home, { recursive: true, mode: 0o755 });
        chownIfRoot(home, entry.uid, entry.gid);
      }
    } else {
      if (u.uid != null) entry.uid = u.uid;
      if (u.passwordHash != null) setPassword(entry, shadow, u.passwordHash);
      if (u.gecos != null) entry.gecos = u.gecos;
      if (u.homeDir != null) entry.home = u.homeDir;
      if (u.shell != null) entry.shell = u.shell;
      if (u.primaryGroup != null) entry.gid = gidOf(u.name, u.primaryGroup);
    }
    for (const name of u.groups ?? []) {
      const g = groups.find((x) => x.name === name);
      if (!g) throw new FilesStageError(`user "${u.name}": supplementary group "${name}" does not exist`);
      if (!g.members.includes(u.name)) { g.members.push(u.name); groupsChanged = true; }
      // useradd adds the member in gshadow too, where the group has an entry there.
      const shadowed = gshadow?.find((e) => e[0] === name);
      const members = (shadowed?.[3] ?? '').split(',').filter(Boolean);
      if (shadowed && !members.includes(u.name)) shadowed[3] = [...members, u.name].join(',');
    }
    if (u.sshAuthorizedKeys?.length) writeAuthorizedKeys(root, entry, u.sshAuthorizedKeys);
  }
  writePasswd(root, entries);
  if (shadow) writeShadowFile(root, 'shadow', shadow);
  if (groupsChanged) writeGroups(root, groups);
  if (groupsChanged && gshadow) writeShadowFile(root, 'gshadow', gshadow);
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
