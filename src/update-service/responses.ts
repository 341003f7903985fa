// Precomputed answers: every (channel, architecture) graph serialized once per graph-data or
// release-store change, so a request is a map lookup and a write, never a graph computation.
import { buildGraph, channelGraph, type Release, type UpdateGraph } from './graph.js';
import type { GraphData } from './graph-data.js';

export interface PrecomputedGraphs {
  graph: UpdateGraph;
  /** `<channel>\n<arch>` → serialized GraphResponse. */
  bodies: Map<string, Buffer>;
  /** What an unknown channel or architecture gets: an empty graph, as Cincinnati answers. */
  empty: Buffer;
}

export function precompute(releases: Release[], data: GraphData): PrecomputedGraphs {
  const graph = buildGraph(releases, data);
  const bodies = new Map<string, Buffer>();
  for (const channel of graph.channels.keys()) {
    for (const arch of graph.architectures) {
      bodies.set(`${channel}\n${arch}`, Buffer.from(JSON.stringify(channelGraph(graph, channel, arch))));
    }
  }
  const empty = Buffer.from(JSON.stringify({ version: 1, nodes: [], edges: [], conditionalEdges: [] }));
  return { graph, bodies, empty };
}

export function lookup(pre: PrecomputedGraphs, channel: string, arch: string): Buffer {
  return pre.bodies.get(`${channel}\n${arch}`) ?? pre.empty;
}
