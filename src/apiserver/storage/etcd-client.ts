// The etcd client the storage backend uses, with its connection options and fault handling, and
// the one way it reads a whole prefix: page by page, every page at the revision of the first.
import { readFileSync } from 'node:fs';
import { Etcd3, isRecoverableError, type IKeyValue, type IOptions } from 'etcd3';

export interface EtcdStorageOptions {
  /** Client URLs, e.g. https://127.0.0.1:2379. */
  endpoints: string[];
  /** Key prefix (default `/registry`). */
  prefix?: string;
  /** TLS: the CA that signed the etcd servers' certificates, and this client's certificate and key. */
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  /**
   * How long one etcd call may take before it fails (default 3 s; the first load gets ten times
   * that). A write that reaches a member while the cluster elects a leader waits there until it
   * fails, so this bounds how long writes stall when the leader dies.
   */
  callTimeoutMs?: number;
  /** How long a write waits for its server's cache to show it before it resolves anyway (default 10 s). */
  cacheWaitMs?: number;
  /** How often the watch asks etcd how far it has got, which moves bookmarks on (default 5 s). */
  progressIntervalMs?: number;
  /** Keys per page of the initial load (default 1,000: a few MiB at most). */
  loadPageSize?: number;
  /** Most events the watch cache keeps (default 50,000). */
  maxEvents?: number;
}

type Policy = NonNullable<NonNullable<IOptions['faultHandling']>['global']>;
const noEvent = () => ({ dispose: () => undefined });
/** The signal handed to each call: never aborted, and the client does not read it — one for all (two new ones per call were 3% of the API server's CPU on etcd). */
const NEVER_ABORTED = new AbortController().signal;

/**
 * The client's fault handling: a call that fails for a reason another member may not have (a
 * dead member, a timeout during an election) is tried on the next member, up to once per member.
 * The client's default also puts a circuit breaker on each member, which under a burst of
 * timeouts during an election opened on every member at once and refused all calls for seconds
 * after the cluster had recovered: no breaker here.
 */
function faultHandling(members: number): IOptions['faultHandling'] {
  const policy = (attempts: number): Policy =>
    ({
      onSuccess: noEvent,
      onFailure: noEvent,
      async execute<T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> {
        for (let attempt = 1; ; attempt++) {
          try {
            return await fn({ signal: NEVER_ABORTED });
          } catch (e) {
            if (attempt >= attempts || !isRecoverableError(e as Error)) throw e;
          }
        }
      },
    }) as unknown as Policy;
  return { host: () => policy(1), global: policy(Math.max(members, 1)) };
}

/** The etcd client the store uses (also what bench:apiserver measures raw puts with). */
export function etcdClient(options: EtcdStorageOptions, callTimeoutMs = options.callTimeoutMs ?? 3_000): Etcd3 {
  return new Etcd3({
    hosts: options.endpoints,
    credentials:
      options.caFile !== undefined
        ? {
            rootCertificate: readFileSync(options.caFile),
            certChain: options.certFile ? readFileSync(options.certFile) : undefined,
            privateKey: options.keyFile ? readFileSync(options.keyFile) : undefined,
          }
        : undefined,
    dialTimeout: callTimeoutMs,
    // A watch catching up may carry many events in one response.
    grpcOptions: { 'grpc.max_receive_message_length': -1 },
    faultHandling: faultHandling(options.endpoints.length),
    defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + callTimeoutMs }),
  });
}

/** The first key after every key that starts with `prefix` (etcd's range end for a prefix). */
export function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i] += 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]);
}

/**
 * Every key-value under `start` as of `revision` (0: now), read in pages of `pageSize` keys, each
 * page at the revision of the first; the revision read at comes with every page.
 */
export async function* rangePages(client: Etcd3, start: Buffer, revision: number, pageSize: number, timeoutMs: number): AsyncGenerator<{ kvs: IKeyValue[]; revision: number }> {
  const end = prefixEnd(start);
  for (let key = start; ; ) {
    const page = await client.kv.range({ key, range_end: end, revision, limit: pageSize }, { deadline: Date.now() + timeoutMs });
    if (revision === 0) revision = Number(page.header.revision);
    yield { kvs: page.kvs, revision };
    if (!page.more || page.kvs.length === 0) return;
    key = Buffer.concat([page.kvs[page.kvs.length - 1].key, Buffer.from([0])]);
  }
}
