// What the handlers share: the store, the type registry, the object semantics, the POST handlers
// added by access control and eviction, the bookkeeping of open watches, and the server's client
// certificate towards kubelets and the aggregator's towards extension API servers.
import type { WatchEventRecorder } from '../filters/metrics.js';
import type { KeyPair } from '../../common/pki.js';
import type { Registry } from '../registry/registry.js';
import type { Resources } from '../registry/resources.js';
import type { Storage } from '../storage/types.js';
import type { Authorizer, PostHandler } from '../types.js';

export interface ServerState {
  storage: Storage;
  registry: Registry;
  resources: Resources;
  postHandlers: PostHandler[];
  /** Stops every open watch (at shutdown); each watch adds its stop function while open. */
  watches: Set<() => void>;
  /** The recorder of watch events (`apiserver_watch_events_total` / `_sizes`) for a group, version and kind. */
  watchEvents(group: string, version: string, kind: string): WatchEventRecorder;
  bookmarkIntervalMs: number;
  /** `host:port` as clients reach the server, for discovery's serverAddressByClientCIDRs. */
  serverAddress(): string;
  /** The server's authorizer now (a handler's own further check: pods/exec asks for `create` on a GET too). */
  authorize: Authorizer;
  /** What pods/log and pods/exec present to kubelets. */
  kubeletClientCert: KeyPair;
  /** What `/version` reports as gitVersion (default bosun's KUBERNETES_VERSION). */
  gitVersion?: string;
  /** What the aggregator presents to extension API servers (front-proxy-client). */
  proxyClientCert: KeyPair;
  /**
   * The discovery document (APIResourceList) each service-backed APIService's server last
   * answered, by APIService name; absent while it does not answer (aggregator/availability.ts).
   */
  aggregatedDiscovery: Map<string, unknown>;
}
