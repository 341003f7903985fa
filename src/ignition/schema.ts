// The shape of Ignition spec 3.x as data: which fields exist, their JSON types, the minor version
// that introduced each, and how lists are keyed when configs merge. Validation (unknown fields,
// fields newer than the config's version), merge and down-translation all walk this one table.
import type { Spec3Minor } from './version.js';

export type Shape =
  | { kind: 'string' }
  | { kind: 'int' }
  | { kind: 'bool' }
  | { kind: 'object'; fields: Record<string, Field> }
  /** key: the field (or, for lists of strings, the value itself) that identifies an entry when merging. */
  | { kind: 'array'; of: Shape; key?: string };

export interface Field { shape: Shape; since: Spec3Minor }

const str: Shape = { kind: 'string' };
const int: Shape = { kind: 'int' };
const bool: Shape = { kind: 'bool' };
const strList: Shape = { kind: 'array', of: str, key: '' };

function obj(fields: Record<string, Shape | Field>): Shape {
  const out: Record<string, Field> = {};
  for (const [name, f] of Object.entries(fields)) out[name] = 'since' in f ? f : { shape: f, since: 0 };
  return { kind: 'object', fields: out };
}
function list(of: Shape, key?: string): Shape {
  return { kind: 'array', of, ...(key !== undefined ? { key } : {}) };
}
function since(minor: Spec3Minor, shape: Shape): Field {
  return { shape, since: minor };
}

const resource = obj({
  compression: str,
  source: str,
  httpHeaders: since(1, list(obj({ name: str, value: str }), 'name')),
  verification: obj({ hash: str }),
});
const owner = obj({ id: int, name: str });
const node = { path: str, overwrite: bool, user: owner, group: owner };

/** Ignition spec 3.5, with the version each field appeared in. */
export const CONFIG_SHAPE: Shape = obj({
  ignition: obj({
    version: str,
    config: obj({ merge: list(resource, 'source'), replace: resource }),
    proxy: since(1, obj({ httpProxy: str, httpsProxy: str, noProxy: strList })),
    security: obj({ tls: obj({ certificateAuthorities: list(resource, 'source') }) }),
    timeouts: obj({ httpResponseHeaders: int, httpTotal: int }),
  }),
  storage: obj({
    disks: list(obj({
      device: str,
      wipeTable: bool,
      partitions: list(obj({
        label: str, number: int, sizeMiB: int, startMiB: int, typeGuid: str, guid: str,
        wipePartitionEntry: bool, shouldExist: bool, resize: since(2, bool),
      }), 'number'),
    }), 'device'),
    raid: list(obj({ name: str, level: str, devices: strList, spares: int, options: strList }), 'name'),
    filesystems: list(obj({
      device: str, format: str, path: str, wipeFilesystem: bool, label: str, uuid: str, options: strList,
      mountOptions: since(1, strList),
    }), 'device'),
    files: list(obj({ ...node, contents: resource, append: list(resource), mode: int }), 'path'),
    directories: list(obj({ ...node, mode: int }), 'path'),
    links: list(obj({ ...node, target: str, hard: bool }), 'path'),
    luks: since(2, list(obj({
      name: str, device: str, keyFile: resource, label: str, uuid: str, options: strList, wipeVolume: bool,
      clevis: obj({
        tang: list(obj({ url: str, thumbprint: str, advertisement: since(4, str) }), 'url'),
        tpm2: bool, threshold: int,
        custom: obj({ pin: str, config: str, needsNetwork: bool }),
      }),
      discard: since(4, bool),
      openOptions: since(4, strList),
      cex: since(5, obj({ enabled: bool })),
    }), 'name')),
  }),
  systemd: obj({
    units: list(obj({
      name: str, enabled: bool, mask: bool, contents: str,
      dropins: list(obj({ name: str, contents: str }), 'name'),
    }), 'name'),
  }),
  passwd: obj({
    users: list(obj({
      name: str, passwordHash: str, sshAuthorizedKeys: strList, uid: int, gecos: str, homeDir: str,
      noCreateHome: bool, primaryGroup: str, groups: strList, noUserGroup: bool, noLogInit: bool,
      shell: str, system: bool, shouldExist: since(2, bool),
    }), 'name'),
    groups: list(obj({ name: str, gid: int, passwordHash: str, system: bool, shouldExist: since(2, bool) }), 'name'),
  }),
  kernelArguments: since(3, obj({ shouldExist: strList, shouldNotExist: strList })),
});

/** True when a value carries no information: null, undefined, or an empty list/object of such. */
export function isEmptyValue(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.values(v as Record<string, unknown>).every(isEmptyValue);
  return false;
}
