// Translating an Ignition 3.x config down: to an older 3.x minor (every field must exist in that
// version), and to spec 2.2 for old clients (root-filesystem files, directories, links, units,
// users and groups). What cannot be expressed is an error naming the field, never silently lost.
import { BosunError } from '../common/errors.js';
import { CONFIG_SHAPE, isEmptyValue, type Shape } from './schema.js';
import type { IgnitionConfig, NodeOwner, Resource } from './types.js';
import type { IgnitionConfigV2, V2File, V2NodeOwner, V2Verification } from './types-v2.js';
import { formatSpec3, type Spec3Minor } from './version.js';

export class TranslationError extends BosunError {
  constructor(readonly path: string, readonly target: string, reason: string) {
    super('IgnitionSpecUntranslatable', `cannot translate to Ignition spec ${target}: ${path} ${reason}`);
  }
}

/** The config at spec 3.<minor>; fields newer than that must be absent or empty. */
export function translateToSpec3(config: IgnitionConfig, minor: Spec3Minor): IgnitionConfig {
  const out = stripToVersion(config, CONFIG_SHAPE, '', minor) as IgnitionConfig;
  out.ignition = { ...out.ignition, version: formatSpec3(minor) };
  return out;
}

function stripToVersion(value: unknown, shape: Shape, path: string, minor: Spec3Minor): unknown {
  if (value === null || value === undefined) return value;
  if (shape.kind === 'array') return (value as unknown[]).map((v, i) => stripToVersion(v, shape.of, `${path}[${i}]`, minor));
  if (shape.kind !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    const field = shape.fields[name];
    const p = path ? `${path}.${name}` : name;
    if (!field) throw new TranslationError(p, formatSpec3(minor), 'is not an Ignition 3.x field');
    if (field.since > minor) {
      if (isEmptyValue(v)) continue;
      throw new TranslationError(p, formatSpec3(minor), `cannot be expressed (introduced in 3.${field.since})`);
    }
    out[name] = stripToVersion(v, field.shape, p, minor);
  }
  return out;
}

const V2 = '2.2.0';

function fail(path: string, reason: string): never {
  throw new TranslationError(path, V2, reason);
}

function requireEmpty(value: unknown, path: string): void {
  if (!isEmptyValue(value)) fail(path, 'cannot be expressed in spec 2.2');
}

function v2Verification(r: Resource | null | undefined, path: string): V2Verification | undefined {
  requireEmpty(r?.httpHeaders, `${path}.httpHeaders`);
  return r?.verification?.hash ? { hash: r.verification.hash } : undefined;
}

function v2Reference(r: Resource, path: string) {
  if (r.compression) fail(`${path}.compression`, 'cannot be expressed in spec 2.2');
  const verification = v2Verification(r, path);
  return { source: r.source ?? '', ...(verification ? { verification } : {}) };
}

function v2Owner(o: NodeOwner | null | undefined): V2NodeOwner | undefined {
  if (!o || isEmptyValue(o)) return undefined;
  return { ...(o.id != null ? { id: o.id } : {}), ...(o.name != null ? { name: o.name } : {}) };
}

function clean<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null)) as T;
}

/** The config as spec 2.2; throws TranslationError naming the first field 2.2 cannot express. */
export function translateToSpec2(config: IgnitionConfig): IgnitionConfigV2 {
  const ign = config.ignition;
  requireEmpty(ign.proxy, 'ignition.proxy');
  requireEmpty(config.kernelArguments, 'kernelArguments');
  for (const k of ['disks', 'raid', 'filesystems', 'luks'] as const) requireEmpty(config.storage?.[k], `storage.${k}`);

  const out: IgnitionConfigV2 = { ignition: { version: V2 } };
  const merge = ign.config?.merge ?? [];
  if (merge.length || ign.config?.replace?.source) {
    out.ignition.config = clean({
      append: merge.length ? merge.map((r, i) => v2Reference(r, `ignition.config.merge[${i}]`)) : undefined,
      replace: ign.config?.replace?.source ? v2Reference(ign.config.replace, 'ignition.config.replace') : undefined,
    });
  }
  const cas = ign.security?.tls?.certificateAuthorities ?? [];
  if (cas.length) out.ignition.security = { tls: { certificateAuthorities: cas.map((r, i) => v2Reference(r, `ignition.security.tls.certificateAuthorities[${i}]`)) } };
  if (ign.timeouts && !isEmptyValue(ign.timeouts)) out.ignition.timeouts = clean({ ...ign.timeouts }) as typeof out.ignition.timeouts;

  const node = (n: { path: string; overwrite?: boolean | null; user?: NodeOwner | null; group?: NodeOwner | null }) =>
    clean({ filesystem: 'root', path: n.path, overwrite: n.overwrite ?? undefined, user: v2Owner(n.user), group: v2Owner(n.group) });

  const files: V2File[] = [];
  (config.storage?.files ?? []).forEach((f, i) => {
    const p = `storage.files[${i}]`;
    const base = { ...node(f), ...(f.mode != null ? { mode: f.mode } : {}) };
    const hasContents = f.contents?.source != null;
    // 3.x appends fragments to the file; 2.2 expresses each fragment as an appending file entry.
    if (hasContents || !f.append?.length) files.push({ ...base, contents: v2Contents(f.contents, `${p}.contents`) });
    (f.append ?? []).forEach((r, j) => files.push({ ...base, append: true, contents: v2Contents(r, `${p}.append[${j}]`) }));
  });
  const directories = (config.storage?.directories ?? []).map((d) => ({ ...node(d), ...(d.mode != null ? { mode: d.mode } : {}) }));
  const links = (config.storage?.links ?? []).map((l, i) => {
    if (!l.target) fail(`storage.links[${i}].target`, 'is required in spec 2.2');
    return { ...node(l), target: l.target, ...(l.hard != null ? { hard: l.hard } : {}) };
  });
  if (files.length || directories.length || links.length) {
    out.storage = clean({ files: files.length ? files : undefined, directories: directories.length ? directories : undefined, links: links.length ? links : undefined });
  }

  const units = config.systemd?.units ?? [];
  if (units.length) {
    out.systemd = {
      units: units.map((u) => clean({
        name: u.name, enabled: u.enabled ?? undefined, mask: u.mask ?? undefined, contents: u.contents ?? undefined,
        dropins: u.dropins?.length ? u.dropins.map((d) => clean({ name: d.name, contents: d.contents ?? undefined })) : undefined,
      })),
    };
  }
  const users = config.passwd?.users ?? [];
  const groups = config.passwd?.groups ?? [];
  users.forEach((u, i) => { if (u.shouldExist === false) fail(`passwd.users[${i}].shouldExist`, 'cannot be expressed in spec 2.2'); });
  groups.forEach((g, i) => { if (g.shouldExist === false) fail(`passwd.groups[${i}].shouldExist`, 'cannot be expressed in spec 2.2'); });
  if (users.length || groups.length) {
    out.passwd = clean({
      users: users.length ? users.map(({ shouldExist: _s, ...u }) => clean(u) as NonNullable<IgnitionConfigV2['passwd']>['users'] extends (infer T)[] | undefined ? T : never) : undefined,
      groups: groups.length ? groups.map(({ shouldExist: _s, ...g }) => clean(g) as { name: string }) : undefined,
    });
  }
  return out;
}

function v2Contents(r: Resource | null | undefined, path: string): V2File['contents'] {
  const verification = v2Verification(r, path);
  return clean({ source: r?.source ?? 'data:,', compression: r?.compression ?? undefined, verification });
}
