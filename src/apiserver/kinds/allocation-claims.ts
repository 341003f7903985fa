// Claims on allocated values kept in storage, one key per value — as kube-apiserver keeps an
// IPAddress object per Service IP — so that API servers sharing one etcd cannot hand out the same
// value twice: a claim is created only if absent, which etcd decides for every server at once.
// Keys: `/allocations/<pool>//<value>`, values `{ owner: "<namespace>/<name>" }`; no API resource
// serves them. The allocator that uses them (service-allocation.ts) keeps its in-memory pools for
// speed and uses the claims to settle races between servers.
import { logger } from '../../common/log.js';
import { StorageError, type KubeObject, type Storage } from '../storage/types.js';

const log = logger('allocation-claims');
const PREFIX = '/allocations/';

export interface Claim {
  pool: string;
  value: string;
  owner: string;
  /** When it was made (ms since the epoch). */
  createdAt: number;
}

const keyOf = (pool: string, value: string) => `${PREFIX}${pool}//${value}`;

function parse(key: string, object: KubeObject): Claim | undefined {
  const [pool, , value] = key.slice(PREFIX.length).split('/');
  const createdAt = Date.parse(String(object.metadata.creationTimestamp));
  return typeof object.owner === 'string' && pool && value ? { pool, value, owner: object.owner, createdAt: Number.isNaN(createdAt) ? 0 : createdAt } : undefined;
}

export class AllocationClaims {
  constructor(private readonly storage: Storage) {}

  /** Every claim stored now, and the revision to follow them from. */
  list(): { claims: Claim[]; revision: number } {
    const listed = this.storage.list(PREFIX);
    return { claims: listed.items.flatMap((i) => parse(i.key, i.object) ?? []), revision: listed.revision };
  }

  /** Calls back for every claim made or dropped after `revision`, through any server. */
  follow(revision: number, onClaim: (claim: Claim) => void, onDrop: (claim: Claim) => void): void {
    this.storage.watch(PREFIX, revision, (event) => {
      const claim = parse(event.key, event.object);
      if (claim) (event.type === 'DELETED' ? onDrop : onClaim)(claim);
    });
  }

  /**
   * Claims `value` of `pool` for `owner`: undefined when it is `owner`'s now, else the owner
   * holding it ('' when the claim is not visible here yet).
   */
  async claim(pool: string, value: string, owner: string): Promise<string | undefined> {
    const key = keyOf(pool, value);
    try {
      await this.storage.create(key, { metadata: { name: value, creationTimestamp: new Date().toISOString() }, owner });
      return undefined;
    } catch (e) {
      if (!(e instanceof StorageError) || e.code !== 'AlreadyExists') throw e;
      const holder = (this.storage.get(key)?.object.owner as string | undefined) ?? '';
      return holder === owner ? undefined : holder;
    }
  }

  /** Drops `owner`'s claim on `value` (in the background: a claim left behind only keeps a value taken). */
  drop(pool: string, value: string, owner: string): void {
    const key = keyOf(pool, value);
    const current = this.storage.get(key);
    if (!current || current.object.owner !== owner) return;
    this.storage.delete(key, { expectedRevision: current.revision }).catch((e: Error) => {
      if (!(e instanceof StorageError)) log.warn({ err: e, key }, 'could not drop an allocation claim');
    });
  }
}
