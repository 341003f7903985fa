// Semantic validation of Ignition 3.x configs, following what Ignition itself checks (its
// config/v3_*/types validation): errors for the version, field types, duplicate paths across
// files/directories/links, duplicate unit/dropin/user/group names, absolute paths, file modes,
// resource URLs (scheme, decodable data URLs), hashes, compression and proxies. What Ignition
// only warns about stays a warning: keys unknown to (or newer than) the config's version, which
// it ignores ("unused key"), setuid/setgid/sticky mode bits (not functional before spec 3.6),
// an owner on a hard link, a plain-HTTP proxy for HTTPS. Every problem names the field path,
// e.g. `storage.files[2].mode`.
import { CONFIG_SHAPE, type Shape } from './schema.js';
import type { IgnitionConfig, LinkEntry, FileEntry, Resource } from './types.js';
import { decodeDataUrl, DataUrlError } from './data-url.js';
import { isSpec3Minor, parseSpecVersion, type Spec3Minor } from './version.js';

export interface ValidationProblem {
  path: string;
  message: string;
  /** Set when Ignition reports the problem and still applies the config. */
  warning?: true;
}

export const isError = (p: ValidationProblem): boolean => !p.warning;

/** The problems of a config, and the config as Ignition reads it: without the keys it ignores. */
export interface CheckedConfig {
  problems: ValidationProblem[];
  /** Present when there is no error. */
  config?: IgnitionConfig;
}

/** URL schemes of resources, with the spec minor that introduced each (Ignition's url.go). */
const SOURCE_SCHEMES: Record<string, Spec3Minor> = { data: 0, http: 0, https: 0, tftp: 0, s3: 0, gs: 2, arn: 4 };
/**
 * A config (or part) that passed checkShape: every field present has its spec type, but any field
 * may be absent or null and any list item null — the semantic checks below look for those.
 */
type Loose<T> = T extends readonly (infer U)[] ? (Loose<U> | null)[] : T extends object ? { [K in keyof T]?: Loose<T[K]> | null } : T;

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

/** All problems in a config, warnings included; no error when Ignition would accept it. */
export function validateConfig(config: unknown): ValidationProblem[] {
  return checkConfig(config).problems;
}

/** Validates a config and, when it has no error, returns it as Ignition reads it. */
export function checkConfig(config: unknown): CheckedConfig {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return { problems: [{ path: '', message: 'config must be a JSON object' }] };
  const minor = configMinor(config);
  if (typeof minor !== 'number') return { problems: [minor] };
  const problems: ValidationProblem[] = [];
  const known = checkShape(config, CONFIG_SHAPE, '', minor, problems) as IgnitionConfig;
  if (problems.some(isError)) return { problems };
  checkSemantics(known, minor, problems);
  return problems.some(isError) ? { problems } : { problems, config: known };
}

function join(path: string, name: string): string {
  return path ? `${path}.${name}` : name;
}

/**
 * Checks types against the spec's shape and returns a copy without the keys Ignition ignores:
 * those that are not fields of the config's version (it decodes into that version's types, so
 * they are "unused keys", reported as warnings).
 */
function checkShape(value: unknown, shape: Shape, path: string, minor: Spec3Minor, out: ValidationProblem[]): unknown {
  if (value === null || value === undefined) return value;
  switch (shape.kind) {
    case 'string':
      if (typeof value !== 'string') out.push({ path, message: 'must be a string' });
      return value;
    case 'bool':
      if (typeof value !== 'boolean') out.push({ path, message: 'must be a boolean' });
      return value;
    case 'int':
      if (typeof value !== 'number' || !Number.isInteger(value)) out.push({ path, message: 'must be an integer' });
      return value;
    case 'array':
      if (!Array.isArray(value)) { out.push({ path, message: 'must be a list' }); return value; }
      return value.map((v, i) => checkShape(v, shape.of, `${path}[${i}]`, minor, out));
    case 'object': {
      if (typeof value !== 'object' || Array.isArray(value)) { out.push({ path, message: 'must be an object' }); return value; }
      const known: Record<string, unknown> = {};
      for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
        const field = shape.fields[name];
        const p = join(path, name);
        if (!field) out.push({ path: p, message: `unused key: not a field of Ignition spec 3.${minor}, ignored`, warning: true });
        else if (field.since > minor && v !== null && v !== undefined) out.push({ path: p, message: `unused key: not available in spec 3.${minor} (introduced in 3.${field.since}), ignored`, warning: true });
        else known[name] = checkShape(v, field.shape, p, minor, out);
      }
      return known;
    }
  }
}

function checkResource(r: Loose<Resource> | null | undefined, path: string, minor: Spec3Minor, out: ValidationProblem[], sourceRequired: boolean): void {
  if (!r) return;
  if (r.source === undefined || r.source === null) {
    if (sourceRequired) out.push({ path: `${path}.source`, message: 'is required' });
  } else {
    checkSource(r.source, `${path}.source`, minor, out);
  }
  if (r.compression && r.compression !== 'gzip') out.push({ path: `${path}.compression`, message: `unsupported compression "${r.compression}" (only "gzip")` });
  const hash = r.verification?.hash;
  if (hash) {
    // Ignition knows sha512, and sha256 from spec 3.1; it checks the sum's length, not its digits.
    const m = /^(sha512|sha256)-(.*)$/.exec(hash);
    const len = m?.[1] === 'sha512' ? 128 : 64;
    if (!m || m[2].length !== len || (m[1] === 'sha256' && minor < 1)) out.push({ path: `${path}.verification.hash`, message: `invalid hash "${hash}" (expected sha512-<hex>${minor >= 1 ? ' or sha256-<hex>' : ''})` });
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
  if (scheme === 's3' && url.searchParams.has('versionId') && !url.searchParams.get('versionId')) out.push({ path, message: 'invalid S3 object version ID (empty versionId)' });
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
  else if ((mode & 0o7000) !== 0) out.push({ path, message: `mode 0${mode.toString(8)}: setuid/setgid/sticky bits are not supported or functional in spec versions older than 3.6.0`, warning: true });
}

/** Proxies must be http(s); a plain-HTTP proxy for HTTPS works but is worth a warning. */
function checkProxy(url: unknown, path: string, httpOk: boolean, out: ValidationProblem[]): void {
  if (typeof url !== 'string') return;
  let scheme: string;
  try { scheme = new URL(url).protocol.slice(0, -1); } catch { out.push({ path, message: `"${abbrev(url)}" is not a valid URL` }); return; }
  if (scheme !== 'http' && scheme !== 'https') out.push({ path, message: 'proxies must be http(s)' });
  else if (scheme === 'http' && !httpOk) out.push({ path, message: 'insecure plaintext HTTP proxy specified for HTTPS resources', warning: true });
}

function checkPath(p: unknown, path: string, out: ValidationProblem[]): void {
  if (typeof p !== 'string' || p === '') { out.push({ path, message: 'is required' }); return; }
  if (!p.startsWith('/')) out.push({ path, message: `"${p}" is not absolute` });
}

function checkUnique<T>(items: readonly (T | null)[] | null | undefined, key: keyof T & string, path: string, out: ValidationProblem[], what: string): void {
  const seen = new Map<string, number>();
  (items ?? []).forEach((item, i) => {
    const k = item?.[key];
    if (typeof k !== 'string') return;
    const prev = seen.get(k);
    if (prev !== undefined) out.push({ path: `${path}[${i}].${key}`, message: `duplicate ${what} "${k}" (also ${path}[${prev}])` });
    else seen.set(k, i);
  });
}

function checkSemantics(c: Loose<IgnitionConfig>, minor: Spec3Minor, out: ValidationProblem[]): void {
  const ign = c.ignition ?? {};
  (ign.config?.merge ?? []).forEach((r, i) => checkResource(r, `ignition.config.merge[${i}]`, minor, out, true));
  checkResource(ign.config?.replace, 'ignition.config.replace', minor, out, false);
  (ign.security?.tls?.certificateAuthorities ?? []).forEach((r, i) => checkResource(r, `ignition.security.tls.certificateAuthorities[${i}]`, minor, out, true));
  checkProxy(ign.proxy?.httpProxy, 'ignition.proxy.httpProxy', true, out);
  checkProxy(ign.proxy?.httpsProxy, 'ignition.proxy.httpsProxy', false, out);

  // Files, directories and links share one namespace of paths.
  const byPath = new Map<string, string>();
  for (const kind of ['files', 'directories', 'links'] as const) {
    const nodes: readonly (Loose<FileEntry & LinkEntry> | null)[] = c.storage?.[kind] ?? [];
    nodes.forEach((n, i) => {
      const p = `storage.${kind}[${i}]`;
      checkPath(n?.path, `${p}.path`, out);
      if (typeof n?.path === 'string') {
        const prev = byPath.get(n.path);
        if (prev) out.push({ path: `${p}.path`, message: `duplicate path "${n.path}" (also ${prev})` });
        else byPath.set(n.path, p);
      }
      if (kind !== 'links') checkMode(n?.mode, `${p}.mode`, out);
      if (kind === 'files') {
        checkResource(n?.contents, `${p}.contents`, minor, out, false);
        (n?.append ?? []).forEach((r, j) => checkResource(r, `${p}.append[${j}]`, minor, out, false));
      }
      // Ignition requires a link's target from spec 3.3 (earlier specs leave it to the apply).
      if (kind === 'links' && !n?.target && minor >= 3) out.push({ path: `${p}.target`, message: 'is required' });
      if (kind === 'links' && n?.hard === true) {
        for (const [who, key] of [['user', 'id'], ['user', 'name'], ['group', 'id'], ['group', 'name']] as const) {
          if (n[who]?.[key] !== undefined && n[who]?.[key] !== null) out.push({ path: `${p}.${who}.${key}`, message: 'user/group ignored for hard link', warning: true });
        }
      }
    });
  }
  (c.storage?.filesystems ?? []).forEach((f, i) => { if (f?.path) checkPath(f.path, `storage.filesystems[${i}].path`, out); });
  (c.storage?.luks ?? []).forEach((l, i) => checkResource(l?.keyFile, `storage.luks[${i}].keyFile`, minor, out, false));

  const units = c.systemd?.units ?? [];
  checkUnique(units, 'name', 'systemd.units', out, 'unit name');
  units.forEach((u, i) => {
    const p = `systemd.units[${i}]`;
    const name = u?.name;
    if (!name) out.push({ path: `${p}.name`, message: 'is required' });
    else if (!UNIT_SUFFIXES.some((s) => name.endsWith(s))) out.push({ path: `${p}.name`, message: `"${name}" has no valid unit type suffix` });
    checkUnique(u?.dropins, 'name', `${p}.dropins`, out, 'dropin name');
    (u?.dropins ?? []).forEach((d, j) => {
      if (!d?.name?.endsWith('.conf')) out.push({ path: `${p}.dropins[${j}].name`, message: `"${d?.name ?? ''}" must end in .conf` });
    });
  });
  checkUnique(c.passwd?.users, 'name', 'passwd.users', out, 'user name');
  checkUnique(c.passwd?.groups, 'name', 'passwd.groups', out, 'group name');
  (c.passwd?.users ?? []).forEach((u, i) => { if (!u?.name) out.push({ path: `passwd.users[${i}].name`, message: 'is required' }); });

  const ka = c.kernelArguments;
  if (ka) {
    const exist = new Set(ka.shouldExist ?? []);
    (ka.shouldNotExist ?? []).forEach((a, i) => {
      if (exist.has(a)) out.push({ path: `kernelArguments.shouldNotExist[${i}]`, message: `"${a}" is also in kernelArguments.shouldExist` });
    });
  }
}
