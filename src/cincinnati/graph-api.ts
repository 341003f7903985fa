// The Cincinnati wire format (graph API v1): what the update service answers and what every client
// (the CVO, `bosun adm upgrade recommend`) reads. Shared here so both sides agree on one shape.

/** The path of the graph API. */
export const GRAPH_PATH = '/api/upgrades_info/v1/graph';

/** The two media types a Cincinnati service serves the graph as. */
export const GRAPH_MEDIA_TYPES = ['application/json', 'application/vnd.redhat.cincinnati.v1+json'] as const;

/** A channel name as Cincinnati accepts it. */
export const CHANNEL_PATTERN = /^[0-9a-z\-.]+$/;

/** Release metadata key listing the channels a release belongs to (comma separated). */
export { channelsMetadataKey as CHANNELS_METADATA_KEY } from '../release/release-metadata.js';

export interface MatchingRule {
  type: string;
  promql?: { promql: string };
}

export interface Risk {
  url: string;
  name: string;
  message: string;
  matchingRules: MatchingRule[];
}

export interface GraphNode {
  version: string;
  payload: string;
  metadata: Record<string, string>;
}

export interface ConditionalEdge {
  edges: { from: string; to: string }[];
  risks: Risk[];
}

export interface GraphResponse {
  version: 1;
  nodes: GraphNode[];
  /** Unconditional (recommended) edges as [fromIndex, toIndex] into `nodes`. */
  edges: [number, number][];
  conditionalEdges: ConditionalEdge[];
}

/** Cincinnati's error body. */
export interface GraphError {
  kind: string;
  value: string;
}
