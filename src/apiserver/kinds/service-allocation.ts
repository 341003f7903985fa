// Cluster IPs and node ports of Services, allocated as kube-apiserver's allocators do: from a
// range (the service network, --service-cluster-ip-range, 172.30.0.0/16 unless said; node ports
// 30000-32767, which also hold the health-check node port of a LoadBalancer Service whose
// externalTrafficPolicy is Local), rebuilt at start from the
// Services in storage so that nothing already held is handed out again after a restart. A
// requested value that is taken is refused (422, kube's messages); values are taken before the
// write and given back when it does not happen, and freed once a Service no longer holds them
// (deleted, type changed away from NodePort/LoadBalancer, or to ExternalName). Reservation is
// synchronous, so concurrent requests to one server can never get the same value. Several servers
// on one etcd must never hand out one value twice either: before a Service is written, each value
// newly taken for it is claimed in storage (allocation-claims.ts), which etcd grants to one server
// only; a server that loses a claim takes another value (or refuses a requested one). Each server
// follows the claims and the Services in storage, and every value remembers the Service holding it,
// so a late notice of a release never frees a value another Service has taken since.
import { ipToNumber, numberToIp, parseCidr } from '../../common/ipv4.js';
import { errors } from '../errors.js';
import type { Storage } from '../storage/types.js';
import type * as api from '../../api/index.js';
import type { Allocations, AllocationSettings } from './strategy.js';

type ServiceSpec = NonNullable<api.Service['spec']>;
import { AllocationClaims, type Claim } from './allocation-claims.js';

/** The service network OpenShift uses by default; defined with the IPv4 helpers, which the MCO reads too. */
export { DEFAULT_SERVICE_CIDR } from '../../common/ipv4.js';

/**
 * A --service-cluster-ip-range, checked as kube-apiserver checks it: an IPv4 network address with
 * a prefix of /12 (a million addresses) to /28 (a few); throws saying what is wrong.
 */
export function checkServiceCidr(text: string): { base: number; bits: number } {
  const cidr = parseCidr(text);
  if (!cidr) throw new Error(`--service-cluster-ip-range must be an IPv4 network such as 172.30.0.0/16 (no host bits set), got "${text}"`);
  if (cidr.bits < 12 || cidr.bits > 28) throw new Error(`--service-cluster-ip-range ${text}: the prefix must be from /12 to /28`);
  return cidr;
}
export const NODE_PORT_MIN = 30000;
export const NODE_PORT_MAX = 32767;

/**
 * A set of offsets 0..size-1 taken one by one. Dynamic allocation starts above a lower band kept
 * for explicit requests (kube's static band: size/16 for IPs, size/32 for ports, bounded), and
 * uses the band only once the rest is full.
 */
export class RangeAllocator {
  /** Taken offsets and who holds each (a Service's namespace/name; '' when not said). */
  private readonly used = new Map<number, string>();
  private cursor: number;

  constructor(
    readonly size: number,
    private readonly band: number,
  ) {
    this.cursor = band;
  }

  has(offset: number): boolean {
    return this.used.has(offset);
  }

  /** Takes `offset` for `owner`; false when it is already taken. */
  take(offset: number, owner = ''): boolean {
    if (this.used.has(offset)) return false;
    this.used.set(offset, owner);
    return true;
  }

  /** Records that `owner` holds `offset`, whoever held it here (a claim in storage says so). */
  assign(offset: number, owner: string): void {
    this.used.set(offset, owner);
  }

  /** Takes the next free offset for `owner`, or undefined when the range is full. */
  next(owner = ''): number | undefined {
    const upper = this.size - this.band;
    for (let i = 0; i < upper; i++) {
      const offset = this.band + ((this.cursor - this.band + i) % upper);
      if (this.take(offset, owner)) {
        this.cursor = offset + 1 >= this.size ? this.band : offset + 1;
        return offset;
      }
    }
    for (let offset = 0; offset < this.band; offset++) if (this.take(offset, owner)) return offset;
    return undefined;
  }

  /** Frees `offset`; with `owner`, only while that owner still holds it. */
  release(offset: number, owner?: string): void {
    if (owner === undefined || this.used.get(offset) === owner) this.used.delete(offset);
  }
}

const staticBand = (size: number, divisor: number, max: number): number => Math.min(Math.max(16, Math.floor(size / divisor)), max);

const usesNodePorts = (spec: ServiceSpec | undefined): boolean => spec?.type === 'NodePort' || spec?.type === 'LoadBalancer';
/** Whether ports without one get a node port: NodePort, and LoadBalancer unless allocateLoadBalancerNodePorts is false. */
const allocatesNodePorts = (spec: ServiceSpec): boolean => spec.type === 'NodePort' || (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false);
/** Whether a Service holds a cluster IP from the range: not ExternalName, not headless. */
const usesClusterIP = (spec: ServiceSpec | undefined): boolean => spec?.type !== 'ExternalName' && spec?.clusterIP !== 'None';

/** The cluster IP a Service holds, if any. */
function heldIP(service: api.Service | undefined): string | undefined {
  const spec = service?.spec;
  return usesClusterIP(spec) && typeof spec?.clusterIP === 'string' && spec.clusterIP !== '' ? spec.clusterIP : undefined;
}

const IP_POOL = 'serviceips';
const PORT_POOL = 'servicenodeports';
const IP_TAKEN = 'provided IP is already allocated';
const PORT_TAKEN = 'provided port is already allocated';
/** How old a claim without its Service must be before a starting server frees it. */
const ORPHAN_CLAIM_AGE_MS = 60_000;
/** How many values a create tries when other servers keep claiming the ones it picks. */
const MAX_CLAIM_ATTEMPTS = 16;

/** A value reserve took for an object: which pool, where, whether it was picked (not asked for), for which port. */
interface Pending {
  pool: typeof IP_POOL | typeof PORT_POOL;
  offset: number;
  dynamic: boolean;
  /** The port's index, or 'healthCheck' for spec.healthCheckNodePort. */
  index?: number | 'healthCheck';
}

/** Who holds a Service's values: its namespace/name. */
const ownerOf = (service: api.Service | undefined): string => `${service?.metadata?.namespace ?? ''}/${service?.metadata?.name ?? ''}`;

/** Whether a Service gets a health-check node port: LoadBalancer with externalTrafficPolicy Local (kube's NeedsHealthCheck). */
export const needsHealthCheck = (spec: ServiceSpec | undefined): boolean => spec?.type === 'LoadBalancer' && spec?.externalTrafficPolicy === 'Local';

const isPortNumber = (n: unknown): n is number => Number.isInteger(n) && (n as number) > 0;

/** The node ports a Service holds (one port may serve TCP and UDP), and its health-check node port. */
function heldPorts(service: api.Service | undefined): Set<number> {
  const ports = (service?.spec?.ports ?? []).map((p) => p?.nodePort);
  return new Set([...ports, service?.spec?.healthCheckNodePort].filter(isPortNumber));
}

/** The allocators of one server, over the Services already in `storage`. */
export function serviceAllocations(storage: Storage, settings: AllocationSettings): Allocations<api.Service> {
  const range = settings.serviceClusterIPRange;
  const { base, bits } = checkServiceCidr(range);
  const ipCount = 2 ** (32 - bits) - 2; // neither the network nor the broadcast address
  const ips = new RangeAllocator(ipCount, staticBand(ipCount, 16, 256));
  const portCount = NODE_PORT_MAX - NODE_PORT_MIN + 1;
  const ports = new RangeAllocator(portCount, staticBand(portCount, 32, 128));
  const ipOffset = (ip: string): number | undefined => {
    const n = ipToNumber(ip);
    return n !== undefined && n > base && n - base - 1 < ipCount ? n - base - 1 : undefined;
  };

  const inPortRange = (port: number) => port >= NODE_PORT_MIN && port <= NODE_PORT_MAX;
  const claims = new AllocationClaims(storage);
  /** Frees what `previous` held and `object` (its next state, if any) does not, while `previous` still holds it; `drop`: its claims too. */
  const release = (object: api.Service | undefined, previous: api.Service | undefined, drop = false) => {
    const owner = ownerOf(previous);
    const ip = heldIP(previous);
    if (ip !== undefined && ip !== heldIP(object)) {
      const offset = ipOffset(ip);
      if (offset !== undefined) ips.release(offset, owner);
      if (drop) claims.drop(IP_POOL, ip, owner);
    }
    const still = heldPorts(object);
    for (const port of heldPorts(previous)) {
      if (still.has(port) || !inPortRange(port)) continue;
      ports.release(port - NODE_PORT_MIN, owner);
      if (drop) claims.drop(PORT_POOL, String(port), owner);
    }
  };
  /** Marks what a stored Service holds as taken by it. */
  const hold = (object: api.Service) => {
    const owner = ownerOf(object);
    const ip = heldIP(object);
    const offset = ip === undefined ? undefined : ipOffset(ip);
    if (offset !== undefined) ips.take(offset, owner);
    for (const port of heldPorts(object)) if (inPortRange(port)) ports.take(port - NODE_PORT_MIN, owner);
  };

  // What storage holds under /core/services/ is Services.
  const listed = storage.list('/core/services/');
  for (const { object } of listed.items) hold(object as api.Service);
  // Services written through other API servers sharing the storage (this server's own writes
  // come through here too, and change nothing: reserve and settle already did).
  storage.watch('/core/services/', listed.revision, (event) => {
    const object = event.object as api.Service;
    const previous = event.previous as api.Service | undefined;
    if (event.type === 'DELETED') return release(undefined, previous ?? object);
    hold(object);
    if (previous) release(object, previous);
  });
  // Claims made through any server: the value is its claimant's, whatever this server thought.
  const poolOf = (claim: Claim): [RangeAllocator, number] | undefined => {
    if (claim.pool === IP_POOL) {
      const offset = ipOffset(claim.value);
      return offset === undefined ? undefined : [ips, offset];
    }
    const port = Number(claim.value);
    return claim.pool === PORT_POOL && inPortRange(port) ? [ports, port - NODE_PORT_MIN] : undefined;
  };
  const assign = (claim: Claim) => {
    const [pool, offset] = poolOf(claim) ?? [];
    pool?.assign(offset!, claim.owner);
  };
  const known = claims.list();
  known.claims.forEach(assign);
  // A claim whose Service does not hold its value was left by a create that never got written (its
  // server died in between) or a drop that failed: freed here, once no create can still be on its way.
  for (const claim of known.claims) {
    if (Date.now() - claim.createdAt < ORPHAN_CLAIM_AGE_MS) continue;
    const service = storage.get(`/core/services/${claim.owner}`)?.object as api.Service | undefined;
    if (!(claim.pool === IP_POOL ? heldIP(service) === claim.value : heldPorts(service).has(Number(claim.value)))) claims.drop(claim.pool, claim.value, claim.owner);
  }
  claims.follow(known.revision, assign, (claim) => {
    const [pool, offset] = poolOf(claim) ?? [];
    pool?.release(offset!, claim.owner);
  });
  /** Values reserve took for an object, not yet claimed; and the claims made for it (given back with it). */
  const pending = new WeakMap<api.Service, Pending[]>();
  const claimed = new WeakMap<api.Service, Array<[string, string]>>();

  const invalid = (object: api.Service, field: string, value: unknown, message: string) =>
    errors.invalid('Service', '', object.metadata?.name ?? '', [{ type: 'FieldValueInvalid', field, message: `Invalid value: ${JSON.stringify(value)}: ${message}` }]);
  const ipInvalid = (object: api.Service, problem: string) => invalid(object, 'spec.clusterIPs', object.spec?.clusterIPs ?? [object.spec?.clusterIP], `failed to allocate IP ${object.spec?.clusterIP}: ${problem}`);
  const portInvalid = (object: api.Service, index: number | 'healthCheck', problem: string) => index === 'healthCheck'
    ? invalid(object, 'spec.healthCheckNodePort', object.spec?.healthCheckNodePort, problem)
    : invalid(object, `spec.ports[${index}].nodePort`, object.spec?.ports?.[index]?.nodePort, problem);

  return {
    reserve(object, previous) {
      const owner = ownerOf(object);
      const mine: Pending[] = [];
      const undo = () => {
        for (const entry of mine.splice(0)) (entry.pool === IP_POOL ? ips : ports).release(entry.offset, owner);
        for (const [pool, value] of claimed.get(object)?.splice(0) ?? []) claims.drop(pool, value, owner);
      };
      pending.set(object, mine);
      try {
        const spec: ServiceSpec = object.spec ?? {};
        if (usesClusterIP(spec)) {
          if (!spec.clusterIP) {
            const offset = ips.next(owner);
            if (offset === undefined) throw errors.internal('failed to allocate a serviceIP: range is full');
            mine.push({ pool: IP_POOL, offset, dynamic: true });
            spec.clusterIP = numberToIp(base + 1 + offset);
          } else if (spec.clusterIP !== heldIP(previous)) {
            const offset = ipOffset(spec.clusterIP);
            const problem = offset === undefined ? `the provided IP (${spec.clusterIP}) is not in the valid range. The range of valid IPs is ${range}` : !ips.take(offset, owner) ? IP_TAKEN : undefined;
            if (problem) throw ipInvalid(object, problem);
            mine.push({ pool: IP_POOL, offset: offset!, dynamic: false });
          }
          spec.clusterIPs = [spec.clusterIP];
        }
        if (usesNodePorts(spec)) {
          const held = heldPorts(previous);
          const taken = new Set<number>();
          (spec.ports ?? []).forEach((port, i) => {
            if (!port.nodePort) {
              if (!allocatesNodePorts(spec)) return;
              const offset = ports.next(owner);
              if (offset === undefined) throw errors.internal('failed to allocate a nodePort: range is full');
              mine.push({ pool: PORT_POOL, offset, dynamic: true, index: i });
              port.nodePort = NODE_PORT_MIN + offset;
            } else if (!held.has(port.nodePort) && !taken.has(port.nodePort)) {
              const inRange = Number.isInteger(port.nodePort) && port.nodePort >= NODE_PORT_MIN && port.nodePort <= NODE_PORT_MAX;
              const problem = !inRange ? `provided port is not in the valid range. The range of valid ports is ${NODE_PORT_MIN}-${NODE_PORT_MAX}` : !ports.take(port.nodePort - NODE_PORT_MIN, owner) ? PORT_TAKEN : undefined;
              if (problem) throw portInvalid(object, i, problem);
              mine.push({ pool: PORT_POOL, offset: port.nodePort - NODE_PORT_MIN, dynamic: false, index: i });
            }
            taken.add(port.nodePort);
          });
        }
        if (needsHealthCheck(spec)) {
          // kube-apiserver's allocHealthCheckNodePort: one more node port, kept while the Service needs it.
          const requested = spec.healthCheckNodePort;
          if (!requested) {
            const offset = ports.next(owner);
            if (offset === undefined) throw errors.internal('failed to allocate a healthCheckNodePort: range is full');
            mine.push({ pool: PORT_POOL, offset, dynamic: true, index: 'healthCheck' });
            spec.healthCheckNodePort = NODE_PORT_MIN + offset;
          } else if (requested !== previous?.spec?.healthCheckNodePort) {
            const inRange = Number.isInteger(requested) && requested >= NODE_PORT_MIN && requested <= NODE_PORT_MAX;
            const inUse = (spec.ports ?? []).some((p) => p.nodePort === requested);
            const problem = !inRange ? `provided port is not in the valid range. The range of valid ports is ${NODE_PORT_MIN}-${NODE_PORT_MAX}` : inUse || !ports.take(requested - NODE_PORT_MIN, owner) ? PORT_TAKEN : undefined;
            if (problem) throw portInvalid(object, 'healthCheck', problem);
            mine.push({ pool: PORT_POOL, offset: requested - NODE_PORT_MIN, dynamic: false, index: 'healthCheck' });
          }
        }
      } catch (e) {
        undo();
        throw e;
      }
      return undo;
    },

    async commit(object) {
      const owner = ownerOf(object);
      const made: Array<[string, string]> = [];
      claimed.set(object, made);
      for (const entry of pending.get(object) ?? []) {
        const pool = entry.pool === IP_POOL ? ips : ports;
        for (let attempt = 1; ; attempt++) {
          const value = entry.pool === IP_POOL ? numberToIp(base + 1 + entry.offset) : String(NODE_PORT_MIN + entry.offset);
          const holder = await claims.claim(entry.pool, value, owner);
          if (holder === undefined) {
            made.push([entry.pool, value]);
            break;
          }
          // Another server handed this value out first: it is that Service's.
          pool.assign(entry.offset, holder);
          if (!entry.dynamic) throw entry.pool === IP_POOL ? ipInvalid(object, IP_TAKEN) : portInvalid(object, entry.index!, PORT_TAKEN);
          const next = pool.next(owner);
          if (next === undefined || attempt >= MAX_CLAIM_ATTEMPTS) throw errors.internal(`failed to allocate a ${entry.pool === IP_POOL ? 'serviceIP' : 'nodePort'}: range is full`);
          entry.offset = next;
          // Reserve took the value for this spec, so it is there (with the port, for a node port).
          const spec = object.spec!;
          if (entry.pool === IP_POOL) {
            spec.clusterIP = numberToIp(base + 1 + next);
            spec.clusterIPs = [spec.clusterIP];
          } else if (entry.index === 'healthCheck') spec.healthCheckNodePort = NODE_PORT_MIN + next;
          else spec.ports![entry.index!].nodePort = NODE_PORT_MIN + next;
        }
      }
    },

    settle: (object, previous) => release(object, previous, true),
  };
}
