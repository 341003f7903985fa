// Semantic validation of Ignition 3.x configs, following what Ignition itself checks: the
// version, field types, fields unknown to (or newer than) the config's version, duplicate
// paths across files/directories/links, duplicate unit/dropin/user/group names, absolute
// paths, file modes, resource URLs (scheme, decodable data URLs), hashes and compression.
// Every problem names the field path, e.g. `storage.files[2].mode`.
import { CONFIG_SHAPE, type Shape } from './schema.js';
import { decodeDataUrl, DataUrlError } from './data-url.js';
import { isSpec3Minor, parseSpecVersion, type Spec3Minor } from './version.js';

export interface ValidationProblem { path: string; message: string }

const SOURCE_SCHEMES: Record<string, Spec3Minor> = { data: 0, http: 0, https: 0, tftp: 0, s3: 0, gs: 1, arn: 4 };
const UNIT_SUFFIXES = ['.service', '.socket', '.device', '.mount', '.automount', '.swap', '.target', '.path', '.timer', '.snapshot', '.slice', '.scope'];

/** The spec-3 minor of a config's `ignition.version`, or a problem naming why there is none. */
export function configMinor(config: unknown): Spec3Minor | ValidationProblem {
  const version = (config as { ignition?: { version?: unknown } } | null)?.ignition?.version;
  if (version === undefined || version === null) return { path: 'ignition.version', message: 'is required' };
  if (typeof version !== 'string') return { path: 'ignition.version', message: 'must be a string' };
  const v = parseSpecVersion(version);
  if (!v) return { path: 'ignition.version', message: `"${version}" is not a valid version` };
  if (v.major !== 3 || v.pre !== undefined || v.patch !== 0 || !isSpec3Minor(v.minor)) {
    return { path: 'ignition.version', message: `unsupported config version "${version}" (supported: 3.0.0–3.5.0)` };
  }
  return v.minor;
}

/** All problems in a config; empty when Ignition would accept it. */
export function validateConfig(config: unknown): ValidationProblem[] {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return [{ path: '', message: 'config must be a JSON object' }];
  const minor = configMinor(config);
  if (typeof minor !== 'number') return [minor];
  const problems: ValidationProblem[] = [];
  checkShape(config, CONFIG_SHAPE, '', minor, problems);
  if (problems.length === 0) checkSemantics(config as Record<string, any>, minor, problems);
  return problems;
}

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

function checkShape(value: unknown, shape: Shape, path: string, minor: Spec3Minor, out: ValidationProblem[]): void {
  if (value === null || value === undefined) return;
  switch (shape.kind) {
    case 'string':
      if (typeof value !== 'string') out.push({ path, message: 'must be a string' });
      return;
    case 'bool':
      if (typeof value !== 'boolean') out.push({ path, message: 'must be a boolean' });
      return;
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value)) out.push({ path, message: 'must be an integer' });
      return;
    case 'array':
      if (!Array.isArray(value)) { out.push({ path, message: 'must be a list' }); return; }
      value.forEach((v, i) => checkShape(v, shape.of, `${path}[${i}]`, minor, out));
      return;
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) { out.push({ path, message: 'must be an object' }); return; }
      for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
        const field = shape.fields[name];
        const p = join(path, name);
        if (!field) out.push({ path: p, message: 'is not a field of Ignition spec 3.' + minor });
        else if (field.since > minor && v !== null && v !== undefined) out.push({ path: p, message: `is not available in spec 3.${minor} (introduced in 3.${field.since})` });
        else checkShape(v, field.shape, p, minor, out);
      }
    }
  }
}

function checkResource(r: any, path: string, minor: Spec3Minor, out: ValidationProblem[], sourceRequired: boolean): void {
  if (!r) return;
  if (r.source === undefined || r.source === null) {
    if (sourceRequired) out.push({ path: `${path}.source`, message: 'is required' });
  } else {
    checkSource(r.source, `${path}.source`, minor, out);
  }
  if (r.compression && r.compression !== 'gzip') out.push({ path: `${path}.compression`, message: `unsupported compression "${r.compression}" (only "gzip")` });
  const hash = r.verification?.hash;
  if (hash) {
    const m = /^(sha512|sha256)-([0-9a-f]+)$/.exec(hash);
    const len = m?.[1] === 'sha512' ? 128 : 64;
    if (!m || m[2].length !== len || (m[1] === 'sha256' && minor < 2)) out.push({ path: `${path}.verification.hash`, message: `invalid hash "${hash}" (expected sha512-<hex>${minor >= 2 ? ' or sha256-<hex>' : ''})` });
  }
  if (r.httpHeaders?.length && !/^https?:/.test(r.source ?? '')) out.push({ path: `${path}.httpHeaders`, message: 'only allowed with http(s) sources' });
}

function checkSource(source: string, path: string, minor: Spec3Minor, out: ValidationProblem[]): void {
  if (source === '') return;
  let url: URL;
  try { url = new URL(source); } catch { out.push({ path, message: `"${abbrev(source)}" is not a valid URL` }); return; }
  const scheme = url.protocol.slice(0, -1);
  const introduced = SOURCE_SCHEMES[scheme];
  if (introduced === undefined || introduced > minor) {
    out.push({ path, message: `unsupported URL scheme "${scheme}"` });
    return;
  }
  if (scheme === 'data') {
    try { decodeDataUrl(source); } catch (e) {
      if (e instanceof DataUrlError) out.push({ path, message: `cannot decode data URL: ${e.message}` });
      else throw e;
    }
  }
}

function abbrev(s: string): string {
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

function checkMode(mode: unknown, path: string, out: ValidationProblem[]): void {
  if (typeof mode !== 'number') return;
  if (mode < 0 || mode > 0o7777) out.push({ path, message: `invalid mode ${mode} (decimal; must be between 0 and 4095, i.e. 07777)` });
}

function checkPath(p: unknown, path: string, out: ValidationProblem[]): void {
  if (typeof p !== 'string' || p === '') { out.push({ path, message: 'is required' }); return; }
  if (!p.startsWith('/')) out.push({ path, message: `"${p}" is not absolute` });
}

function checkUnique(items: any[] | null | undefined, key: string, path: string, out: ValidationProblem[], what: string): void {
  const seen = new Map<string, number>();
  (items ?? []).forEach((item, i) => {
    const k = item?.[key];
    if (typeof k !== 'string') return;
    const prev = seen.get(k);
    if (prev !== undefined) out.push({ path: `${path}[${i}].${key}`, message: `duplicate ${what} "${k}" (also ${path}[${prev}])` });
    else seen.set(k, i);
  });
}

function checkSemantics(c: Record<string, any>, minor: Spec3Minor, out: ValidationProblem[]): void {
  const ign = c.ignition ?? {};
  (ign.config?.merge ?? []).forEach((r: any, i: number) => checkResource(r, `ignition.config.merge[${i}]`, minor, out, true));
  checkResource(ign.config?.replace, 'ignition.config.replace', minor, out, false);
  (ign.security?.tls?.certificateAuthorities ?? []).forEach((r: any, i: number) => checkResource(r, `ignition.security.tls.certificateAuthorities[${i}]`, minor, out, true));

  // Files, directories and links share one namespace of paths.
  const byPath = new Map<string, string>();
  for (const kind of ['files', 'directories', 'links'] as const) {
    (c.storage?.[kind] ?? []).forEach((n: any, i: number) => {
      const p = `storage.${kind}[${i}]`;
      checkPath(n?.path, `${p}.path`, out);
      if (typeof n?.path === 'string') {
        const prev = byPath.get(n.path);
        if (prev) out.push({ path: `${p}.path`, message: `duplicate path "${n.path}" (also ${prev})` });
        else byPath.set(n.path, p);
      }
      if (kind !== 'links') checkMode(n?.mode, `${p}.mode`, out);
      if (kind === 'files') {
        checkResource(n.contents, `${p}.contents`, minor, out, false);
        (n.append ?? []).forEach((r: any, j: number) => checkResource(r, `${p}.append[${j}]`, minor, out, false));
      }
      if (kind === 'links' && !n?.target && !(minor >= 4 && n?.overwrite === false)) out.push({ path: `${p}.target`, message: 'is required' });
    });
  }
  (c.storage?.filesystems ?? []).forEach((f: any, i: number) => { if (f?.path) checkPath(f.path, `storage.filesystems[${i}].path`, out); });
  (c.storage?.luks ?? []).forEach((l: any, i: number) => checkResource(l?.keyFile, `storage.luks[${i}].keyFile`, minor, out, false));

  const units: any[] = c.systemd?.units ?? [];
  checkUnique(units, 'name', 'systemd.units', out, 'unit name');
  units.forEach((u, i) => {
    const p = `systemd.units[${i}]`;
    if (!u?.name) out.push({ path: `${p}.name`, message: 'is required' });
    else if (!UNIT_SUFFIXES.some((s) => u.name.endsWith(s))) out.push({ path: `${p}.name`, message: `"${u.name}" has no valid unit type suffix` });
    checkUnique(u?.dropins, 'name', `${p}.dropins`, out, 'dropin name');
    (u?.dropins ?? []).forEach((d: any, j: number) => {
      if (!d?.name?.endsWith('.conf')) out.push({ path: `${p}.dropins[${j}].name`, message: `"${d?.name ?? ''}" must end in .conf` });
    });
  });
  checkUnique(c.passwd?.users, 'name', 'passwd.users', out, 'user name');
  checkUnique(c.passwd?.groups, 'name', 'passwd.groups', out, 'group name');
  (c.passwd?.users ?? []).forEach((u: any, i: number) => { if (!u?.name) out.push({ path: `passwd.users[${i}].name`, message: 'is required' }); });

  const ka = c.kernelArguments;
  if (ka) {
    const exist = new Set<string>(ka.shouldExist ?? []);
    (ka.shouldNotExist ?? []).forEach((a: string, i: number) => {
      if (exist.has(a)) out.push({ path: `kernelArguments.shouldNotExist[${i}]`, message: `"${a}" is also in kernelArguments.shouldExist` });
    });
  }
}
