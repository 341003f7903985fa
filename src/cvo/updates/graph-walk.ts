// The client side of the update graph (what the CVO and `bosun adm upgrade recommend` do with a
// Cincinnati answer): validate the response, find our own node, follow its outgoing edges.
// Unconditional edges become availableUpdates; conditional edges become conditionalUpdates with
// their risks, rules of unknown types pruned, and a target dropped when a risk keeps no rule (as
// OpenShift's CVO does, so nothing is offered that cannot be evaluated). Pure.
import { BosunError } from '../../common/errors.js';
import semver from 'semver';
import { CHANNELS_METADATA_KEY, type GraphResponse, type MatchingRule, type Risk } from '../../cincinnati/graph-api.js';

/** ClusterVersion's Release: what a cluster may move to. */
export interface Release {
  version: string;
  image: string;
  url?: string;
  channels?: string[];
}

export interface ConditionalUpdate {
  release: Release;
  risks: Risk[];
}

export interface UpdateChoices {
  /** The current node's channels (status.desired.channels). */
  channels: string[];
  availableUpdates: Release[];
  conditionalUpdates: ConditionalUpdate[];
}

/** Rule types this client can evaluate. */
export const KNOWN_RULE_TYPES = new Set(['Always', 'PromQL']);

/** Failures with OpenShift's RetrievedUpdates reasons. */
export class GraphWalkError extends BosunError {
  constructor(
    override readonly reason: 'ResponseInvalid' | 'VersionNotFound',
    message: string,
  ) {
    super(reason, message);
  }
}

const invalid = (message: string): never => {
  throw new GraphWalkError('ResponseInvalid', `the update service's answer is not a valid update graph: ${message}`);
};

/** Checks that parsed JSON has the Cincinnati graph shape; returns it typed. */
export function parseGraphResponse(body: unknown): GraphResponse {
  const g = body as Record<string, unknown>;
  if (g === null || typeof g !== 'object' || Array.isArray(g)) invalid('expected a JSON object');
  if (!Array.isArray(g.nodes)) invalid('"nodes" is missing or not a list');
  const nodes = g.nodes as unknown[];
  nodes.forEach((n, i) => {
    const node = n as Record<string, unknown>;
    if (node === null || typeof node !== 'object') invalid(`nodes[${i}] is not an object`);
    if (typeof node.version !== 'string' || !semver.valid(node.version)) invalid(`nodes[${i}].version ${JSON.stringify(node.version)} is not a semantic version`);
    if (typeof node.payload !== 'string' || node.payload === '') invalid(`nodes[${i}].payload is missing`);
    if (node.metadata !== undefined && (node.metadata === null || typeof node.metadata !== 'object')) invalid(`nodes[${i}].metadata is not an object`);
  });
  const edges = g.edges ?? [];
  if (!Array.isArray(edges)) invalid('"edges" is not a list');
  (edges as unknown[]).forEach((e, i) => {
    if (!Array.isArray(e) || e.length !== 2 || !e.every((x) => Number.isInteger(x) && x >= 0 && x < nodes.length)) invalid(`edges[${i}] is not a pair of node indices`);
  });
  const conditionalEdges = g.conditionalEdges ?? [];
  if (!Array.isArray(conditionalEdges)) invalid('"conditionalEdges" is not a list');
  (conditionalEdges as unknown[]).forEach((c, i) => {
    const ce = c as Record<string, unknown>;
    if (ce === null || typeof ce !== 'object' || !Array.isArray(ce.edges) || !Array.isArray(ce.risks)) invalid(`conditionalEdges[${i}] needs "edges" and "risks" lists`);
    for (const r of ce.risks as Record<string, unknown>[]) {
      if (!r || typeof r.name !== 'string' || typeof r.url !== 'string' || !Array.isArray(r.matchingRules)) invalid(`conditionalEdges[${i}] has a risk without name, url or matchingRules`);
    }
  });
  return { version: 1, nodes: nodes as GraphResponse['nodes'], edges: edges as [number, number][], conditionalEdges: conditionalEdges as GraphResponse['conditionalEdges'] };
}

function toRelease(node: GraphResponse['nodes'][number]): Release {
  const release: Release = { version: node.version, image: node.payload };
  const metadata = node.metadata ?? {};
  if (metadata.url) release.url = metadata.url;
  const channels = metadata[CHANNELS_METADATA_KEY];
  if (channels) release.channels = channels.split(',').filter(Boolean).sort();
  return release;
}

function pruneRules(rules: MatchingRule[]): MatchingRule[] {
  return rules.filter((r) => KNOWN_RULE_TYPES.has(r.type) && (r.type !== 'PromQL' || typeof r.promql?.promql === 'string'));
}

/**
 * Where a cluster at `currentVersion` (payload `currentImage`, when known) may go. Throws
 * VersionNotFound when the channel does not contain the current version.
 */
export function walkGraph(graph: GraphResponse, currentVersion: string, currentImage?: string): UpdateChoices {
  // Prefer the exact payload; a cluster installed from a mirror knows only its version.
  let self = currentImage ? graph.nodes.findIndex((n) => n.payload === currentImage) : -1;
  if (self < 0) self = graph.nodes.findIndex((n) => n.version === currentVersion);
  if (self < 0) throw new GraphWalkError('VersionNotFound', `version ${currentVersion} is not in the channel's update graph (the channel may not offer it yet, or the version is not a released one)`);
  const channels = toRelease(graph.nodes[self]).channels ?? [];

  const byVersion = (a: Release, b: Release): number => semver.rcompare(a.version, b.version);
  const available = new Map<string, Release>();
  for (const [from, to] of graph.edges) {
    if (from === self) available.set(graph.nodes[to].version, toRelease(graph.nodes[to]));
  }

  const conditional = new Map<string, ConditionalUpdate>();
  const dropped = new Set<string>();
  const selfVersion = graph.nodes[self].version;
  for (const ce of graph.conditionalEdges) {
    for (const edge of ce.edges) {
      if (edge.from !== selfVersion || available.has(edge.to)) continue;
      const node = graph.nodes.find((n) => n.version === edge.to);
      if (!node) continue;
      const entry = conditional.get(edge.to) ?? { release: toRelease(node), risks: [] };
      for (const risk of ce.risks) {
        const matchingRules = pruneRules(risk.matchingRules);
        if (matchingRules.length === 0) dropped.add(edge.to);
        if (!entry.risks.some((r) => r.name === risk.name)) entry.risks.push({ ...risk, matchingRules });
      }
      conditional.set(edge.to, entry);
    }
  }
  for (const v of dropped) conditional.delete(v);
  return {
    channels,
    availableUpdates: [...available.values()].sort(byVersion),
    conditionalUpdates: [...conditional.values()].sort((a, b) => byVersion(a.release, b.release)),
  };
}
