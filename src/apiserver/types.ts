// The API server's public types: its options, the running server's handle, and the extension
// points other parts of bosun attach to it (authenticators, the authorizer, POST handlers for
// virtual resources, completion listeners for the audit trail).
import type { Storage } from './storage/types.js';
import type { EtcdStorageOptions } from './storage/etcd.js';
import type { Registry } from './registry/registry.js';
import type { Resources } from './registry/resources.js';
import type { RequestAttributes, UserInfo } from './auth/request-attributes.js';

export type { RequestAttributes } from './auth/request-attributes.js';
export type User = UserInfo;

/** Finds who is calling from the bearer token, or undefined when no authenticator knows it. */
export type Authenticator = (token: string) => User | undefined;
/** Returns undefined to allow, or the reason to refuse (becomes a 403). */
export type Authorizer = (attributes: RequestAttributes) => string | undefined;

/** A finished request (resource or not), for the audit trail. */
export interface CompletedRequest {
  attributes: RequestAttributes;
  code: number;
  userAgent: string;
  requestId: string;
  /** The user the request ran as, when it impersonated one (attributes.user is who authenticated). */
  impersonatedUser?: User;
}

/** A POST to an endpoint the object store does not serve itself (`pods/eviction`, `selfsubjectaccessreviews`, ...). */
export interface PostRequest {
  user: User;
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  /** The decoded JSON body, decoded when first read (a body that does not decode throws then): the handler narrows what it reads. */
  readonly body: Record<string, unknown>;
  dryRun: boolean;
}
/** Answers the POST (`{code, body}`), or undefined when the endpoint is not this handler's. Throw ApiError to refuse. */
export type PostHandler = (request: PostRequest) => Promise<{ code: number; body: unknown } | undefined>;

export interface ApiServerOptions {
  dataDir: string;
  host?: string;
  port?: number;
  /** More names and addresses the serving certificate is valid for (the install's api-int
   *  balancer address), beside localhost, the listen host, the kubernetes service names and its
   *  cluster IP. */
  servingNames?: string[];
  /** Keep this many revisions in the log (default 10,000); older watches get 410. */
  compactKeep?: number;
  /** How often compaction runs (default 60 s). */
  compactIntervalMs?: number;
  /** How often watches that asked for them get a BOOKMARK (default 60 s). */
  bookmarkIntervalMs?: number;
  /** How often every APIService's server is checked when nothing it depends on changed (default 5 s). */
  apiServiceCheckIntervalMs?: number;
  logLevel?: string;
  /** Keep objects in this etcd cluster instead of SQLite in the data directory. */
  etcd?: EtcdStorageOptions;
  /** --service-cluster-ip-range: the network Services' cluster IPs come from (default 172.30.0.0/16). */
  serviceClusterIPRange?: string;
  /** What the `kubernetes` Service's endpoints name (kube-apiserver's --advertise-address): a
   *  balancer in front of several servers; default this server's listen address and port. */
  advertise?: { address: string; port: number };
  /** The Kubernetes version `/version` and OpenAPI report (kube-apiserver's, e.g. `v1.33.1`); default bosun's. */
  kubernetesVersion?: string;
  /** Request metrics (the metrics and in-flight filters, watch and etcd observers; default on). Off
   *  only to measure what they cost (`npm run bench:apiserver`): /metrics still answers. */
  requestMetrics?: boolean;
  /** How long a stopping server keeps its open connections (default 0): each request on them is
   *  answered 503 with Retry-After and `Connection: close`, so that a client behind a balancer asks
   *  again on a new connection, to another server (kube-apiserver's --shutdown-send-retry-after);
   *  requests in flight finish, and connections idle that long are closed. 0: idle connections are
   *  closed at once, requests in flight still finish (up to SHUTDOWN_INFLIGHT_MS). */
  shutdownGraceMs?: number;
  /** Access control comes later (setAuthorizer): until then only system:masters is authorised, so
   *  that the moment between listening and loading RBAC lets no other user (a node's client
   *  certificate, say) do anything. Without it every authenticated user is authorised until
   *  setAuthorizer (a bare API server for tests and tools). */
  accessControlPending?: boolean;
}

export interface ApiServer {
  url: string;
  port: number;
  host: string;
  kubeconfigPath: string;
  caPem: string;
  token: string;
  storage: Storage;
  registry: Registry;
  /** Adds an authenticator tried after the admin token. */
  addAuthenticator(authenticator: Authenticator): void;
  /** Who a bearer token names, through every authenticator (TokenReview asks this), or undefined. */
  authenticateToken(token: string): User | undefined;
  /** Replaces the authorizer (default: every authenticated user may do everything). */
  setAuthorizer(authorizer: Authorizer): void;
  /** The object semantics (create/update/delete with hooks), for endpoints served beside the store. */
  resources: Resources;
  /** Adds a handler for POSTs to subresources and virtual resources; the request has been authorized. */
  addPostHandler(handler: PostHandler): void;
  /** Calls `listener` after every authenticated request has been answered. */
  onCompleted(listener: (request: CompletedRequest) => void): void;
  /** The first half of stop(): refuses new requests (503, Retry-After, `Connection: close`) and
   *  waits for the open connections to go (options.shutdownGraceMs), while everything else still runs. */
  drain(): Promise<void>;
  stop(): Promise<void>;
}
