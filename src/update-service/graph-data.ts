// Reading and validating graph data in the cincinnati-graph-data format (schema 1.1.0):
// `channels/<name>.yaml` {name, versions[]} and `blocked-edges/*.yaml` {to, from, url, name,
// message, matchingRules, fixedIn}. Parsing is pure (text in, typed data or a named error out);
// loadGraphData is the thin shell that reads a directory.
import { BosunError } from '../common/errors.js';
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import semver from 'semver';
import { CHANNEL_PATTERN, type MatchingRule } from '../cincinnati/graph-api.js';

export interface Channel {
  name: string;
  versions: string[];
}

export interface BlockedEdge {
  /** The file it came from, for messages. */
  file: string;
  to: string;
  /** The `from` regex as written; matched anchored against `<version>+<arch>`. */
  from: string;
  fromPattern: RegExp;
  /** Present only for conditional blocks (with matchingRules). */
  risk?: { url: string; name: string; message: string; matchingRules: MatchingRule[] };
  fixedIn?: string;
}

export interface GraphData {
  channels: Channel[];
  blockedEdges: BlockedEdge[];
}

export class GraphDataError extends BosunError {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super('GraphDataInvalid', `${file}: ${message}`);
  }
}

function asObject(doc: unknown, file: string): Record<string, unknown> {
  if (doc === null || typeof doc !== 'object' || Array.isArray(doc)) throw new GraphDataError(file, 'expected a YAML mapping');
  return doc as Record<string, unknown>;
}

function requireString(obj: Record<string, unknown>, key: string, file: string): string {
  const v = obj[key];
  if (typeof v !== 'string' || v.trim() === '') throw new GraphDataError(file, `"${key}" must be a non-empty string`);
  return v.trim();
}

function parseYaml(text: string, file: string): unknown {
  try {
    return parse(text);
  } catch (err) {
    throw new GraphDataError(file, `invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
}

export function parseChannel(text: string, file: string): Channel {
  const obj = asObject(parseYaml(text, file), file);
  const name = requireString(obj, 'name', file);
  if (!CHANNEL_PATTERN.test(name)) throw new GraphDataError(file, `channel name "${name}" does not match ${CHANNEL_PATTERN}`);
  const versions = obj.versions ?? [];
  if (!Array.isArray(versions)) throw new GraphDataError(file, '"versions" must be a list');
  const out: string[] = [];
  for (const v of versions) {
    const s = String(v);
    if (!semver.valid(s)) throw new GraphDataError(file, `"${s}" is not a semantic version`);
    out.push(s);
  }
  return { name, versions: out };
}

/** Compiles a blocked edge's `from` regex anchored at both ends, as Cincinnati does. */
export function anchoredPattern(from: string, file: string): RegExp {
  try {
    return new RegExp(`^(?:${from})$`);
  } catch (err) {
    throw new GraphDataError(file, `invalid "from" regex ${JSON.stringify(from)}: ${(err as Error).message}`);
  }
}

export function parseBlockedEdge(text: string, file: string): BlockedEdge {
  const obj = asObject(parseYaml(text, file), file);
  const to = requireString(obj, 'to', file);
  if (!semver.valid(to)) throw new GraphDataError(file, `"to" ${JSON.stringify(to)} is not a semantic version`);
  const from = requireString(obj, 'from', file);
  const edge: BlockedEdge = { file, to, from, fromPattern: anchoredPattern(from, file) };
  if (typeof obj.fixedIn === 'string') edge.fixedIn = obj.fixedIn;
  if (obj.matchingRules !== undefined) {
    if (!Array.isArray(obj.matchingRules) || obj.matchingRules.length === 0) throw new GraphDataError(file, '"matchingRules" must be a non-empty list');
    const rules: MatchingRule[] = obj.matchingRules.map((r, i) => {
      const rule = asObject(r, `${file} matchingRules[${i}]`);
      const type = requireString(rule, 'type', `${file} matchingRules[${i}]`);
      const out: MatchingRule = { type };
      if (type === 'PromQL') {
        const promql = asObject(rule.promql, `${file} matchingRules[${i}].promql`);
        out.promql = { promql: requireString(promql, 'promql', `${file} matchingRules[${i}].promql`) };
      }
      return out;
    });
    edge.risk = {
      url: requireString(obj, 'url', file),
      name: requireString(obj, 'name', file),
      message: requireString(obj, 'message', file),
      matchingRules: rules,
    };
  }
  return edge;
}

function yamlFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') || f.endsWith('.yml'))
    .sort();
}

/** Reads a graph-data directory. Throws GraphDataError naming the first bad file. */
export function loadGraphData(dir: string): GraphData {
  const channelsDir = join(dir, 'channels');
  if (!existsSync(channelsDir)) throw new GraphDataError(dir, 'no channels/ directory');
  const channels = yamlFiles(channelsDir).map((f) => parseChannel(readFileSync(join(channelsDir, f), 'utf8'), `channels/${f}`));
  const seen = new Set<string>();
  for (const c of channels) {
    if (seen.has(c.name)) throw new GraphDataError(`channels/${c.name}.yaml`, `channel "${c.name}" defined twice`);
    seen.add(c.name);
  }
  const blockedDir = join(dir, 'blocked-edges');
  const blockedEdges = yamlFiles(blockedDir).map((f) => parseBlockedEdge(readFileSync(join(blockedDir, f), 'utf8'), `blocked-edges/${f}`));
  return { channels, blockedEdges };
}
