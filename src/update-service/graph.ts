// The update graph, as pure functions: releases' `previous`/`next` give the edges (within one
// architecture); blocked edges remove them (no matchingRules) or turn them into conditional
// edges carrying risks (with matchingRules); channels select which nodes a client sees.
// No I/O here: the server builds once per graph-data change and serves the precomputed result.
import { BosunError } from '../common/errors.js';
import semver from 'semver';
import { CHANNELS_METADATA_KEY, type ConditionalEdge, type GraphNode, type GraphResponse, type Risk } from '../cincinnati/graph-api.js';
import type { GraphData } from './graph-data.js';

export interface Release {
  version: string;
  arch: string;
  /** Pullspec by digest. */
  payload: string;
  previous: string[];
  next: string[];
  metadata: Record<string, string>;
}

/** An edge that survived the blocked edges; `risks` is empty for a recommended edge. */
interface Incoming {
  from: string;
  risks: Risk[];
}

export interface UpdateGraph {
  /** Releases by `<version>+<arch>`. */
  releases: Map<string, Release>;
  /** Surviving edges, by target key. */
  incoming: Map<string, Incoming[]>;
  /** Channel name → versions in it. */
  channels: Map<string, Set<string>>;
  /** Channel names per version, comma-joined (the node metadata Cincinnati serves). */
  channelsOfVersion: Map<string, string>;
  architectures: string[];
  /** Counts for logs and the benchmark. */
  stats: { releases: number; edges: number; removed: number; conditional: number };
}

export class GraphBuildError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('GraphContradictory', message, options);
  }
}

const keyOf = (version: string, arch: string): string => `${version}+${arch}`;

/** Builds the whole graph. Throws GraphBuildError on contradictory input (a version twice per arch). */
export function buildGraph(releaseList: Release[], data: GraphData): UpdateGraph {
  const releases = new Map<string, Release>();
  for (const r of releaseList) {
    const key = keyOf(r.version, r.arch);
    const existing = releases.get(key);
    if (existing) throw new GraphBuildError(`release ${r.version} (${r.arch}) appears twice: ${existing.payload} and ${r.payload}`);
    releases.set(key, r);
  }

  // Edges from both directions of the metadata, deduplicated.
  const edgeSets = new Map<string, Set<string>>();
  const addEdge = (fromKey: string, toKey: string): void => {
    if (!releases.has(fromKey) || !releases.has(toKey) || fromKey === toKey) return;
    let set = edgeSets.get(toKey);
    if (!set) edgeSets.set(toKey, (set = new Set()));
    set.add(fromKey);
  };
  for (const [key, r] of releases) {
    for (const p of r.previous) addEdge(keyOf(p, r.arch), key);
    for (const n of r.next) addEdge(key, keyOf(n, r.arch));
  }

  const blockedByTarget = new Map<string, GraphData['blockedEdges']>();
  for (const b of data.blockedEdges) {
    const list = blockedByTarget.get(b.to) ?? [];
    list.push(b);
    blockedByTarget.set(b.to, list);
  }

  const incoming = new Map<string, Incoming[]>();
  const stats = { releases: releases.size, edges: 0, removed: 0, conditional: 0 };
  for (const [toKey, froms] of edgeSets) {
    const to = releases.get(toKey)!;
    const blocks = blockedByTarget.get(to.version) ?? [];
    const list: Incoming[] = [];
    for (const fromKey of froms) {
      const from = releases.get(fromKey)!;
      let removed = false;
      const risks: Risk[] = [];
      for (const b of blocks) {
        // Graph data writes `from` against `<version>+<arch>` (e.g. `4[.]10[.]3[+].*`) or the bare
        // version (e.g. `4\.8\..*`); accept either spelling.
        if (!b.fromPattern.test(fromKey) && !b.fromPattern.test(from.version)) continue;
        if (!b.risk) {
          removed = true;
          break;
        }
        if (!risks.some((r) => r.name === b.risk!.name)) risks.push(b.risk);
      }
      if (removed) {
        stats.removed++;
        continue;
      }
      if (risks.length > 0) stats.conditional++;
      else stats.edges++;
      list.push({ from: fromKey, risks });
    }
    incoming.set(toKey, list);
  }

  const channels = new Map<string, Set<string>>();
  const names = new Map<string, string[]>();
  for (const c of [...data.channels].sort((a, b) => a.name.localeCompare(b.name))) {
    channels.set(c.name, new Set(c.versions));
    for (const v of c.versions) {
      const list = names.get(v) ?? [];
      list.push(c.name);
      names.set(v, list);
    }
  }
  const channelsOfVersion = new Map([...names].map(([v, list]) => [v, list.join(',')]));
  const architectures = [...new Set([...releases.values()].map((r) => r.arch))].sort();
  return { releases, incoming, channels, channelsOfVersion, architectures, stats };
}

/** The Cincinnati answer for one channel and architecture: every node in it and the edges between them. */
export function channelGraph(graph: UpdateGraph, channel: string, arch: string): GraphResponse {
  const versions = graph.channels.get(channel);
  const empty: GraphResponse = { version: 1, nodes: [], edges: [], conditionalEdges: [] };
  if (!versions) return empty;
  const members: Release[] = [];
  for (const v of versions) {
    const r = graph.releases.get(keyOf(v, arch));
    if (r) members.push(r);
  }
  members.sort((a, b) => semver.compare(a.version, b.version));
  const index = new Map(members.map((r, i) => [keyOf(r.version, r.arch), i]));
  const nodes: GraphNode[] = members.map((r) => ({
    version: r.version,
    payload: r.payload,
    metadata: { ...r.metadata, [CHANNELS_METADATA_KEY]: graph.channelsOfVersion.get(r.version) ?? '' },
  }));
  const edges: [number, number][] = [];
  const conditional = new Map<string, ConditionalEdge>();
  for (const to of members) {
    const toKey = keyOf(to.version, to.arch);
    for (const e of graph.incoming.get(toKey) ?? []) {
      const fromIndex = index.get(e.from);
      if (fromIndex === undefined) continue;
      if (e.risks.length === 0) {
        edges.push([fromIndex, index.get(toKey)!]);
        continue;
      }
      const group = e.risks.map((r) => r.name).join('\n');
      let entry = conditional.get(group);
      if (!entry) conditional.set(group, (entry = { edges: [], risks: e.risks }));
      entry.edges.push({ from: members[fromIndex].version, to: to.version });
    }
  }
  return { version: 1, nodes, edges, conditionalEdges: [...conditional.values()] };
}
