// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: a
// candidate takes the Lease when it is free or its holder stopped renewing for leaseDuration,
// renews it every retryPeriod while leading, and stops leading when it could not renew within
// renewDeadline — before anyone else may take it, so two leaders never act at once as long as
// clocks advance alike. Writes use the Lease's resourceVersion, so two candidates racing for a
// free Lease cannot both win.
//
// States: candidate → (acquired) leading → (renew failed past the deadline, or stopped) →
// candidate again, or done when the signal aborts (a leader then releases the Lease at once so a
// successor need not wait out the lease duration). A candidate tries again every retryPeriod, as
// client-go's does, and also watches the Lease meanwhile: when its holder releases it (or it is
// deleted) the candidate tries at once instead of at its next retry — the hand-over from a
// component that stops to its successor takes a round trip, not up to a retry period (26 s by
// default). A holder that stops renewing without releasing is still found out by the retries.
import { rfc3339Micro } from '../common/time.js';
import type { KubeConfigLike } from './kubeconfig.js';
import { hostname } from 'node:os';
import { logger } from '../common/log.js';
import { type Clock, realClock, sleepOn } from './clock.js';
import { isConflict, isNotFound, KubeClient } from './client.js';
import { Informer } from './informer.js';
import type * as api from '../api/index.js';
import { resources } from './resources.js';

const log = logger('leader-election');
const { leases: LEASES, namespaces: NAMESPACES } = resources;

/** Which Lease, who competes for it and its timings: what a component's flags set. */
export interface LeaderElectionSettings {
  namespace: string;
  name: string;
  /** Who this candidate is (default: hostname + pid). */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
}

/**
 * Where the Lease is read and written: through the API (a client's, by default) or, for the
 * loops an API server runs itself, through its own registry. Conflicts are errors with code 409.
 */
export interface LeaseStore {
  read(namespace: string, name: string): Promise<api.Lease | undefined>;
  create(lease: api.Lease): Promise<unknown>;
  update(lease: api.Lease): Promise<unknown>;
}

export interface LeaderElectionOptions extends LeaderElectionSettings {
  /** How to reach the API: a client, or a kubeconfig to make one from; or only the Lease (`leases`). */
  client?: KubeClient;
  kubeconfig?: KubeConfigLike;
  /** The Lease without a client: a candidate then looks again every retry period (no watch). */
  leases?: LeaseStore;
  /** Time for renewals and expiry (default the wall clock; tests pass a FakeClock). */
  clock?: Clock;
  /** Stops the candidate; a leader releases the Lease. */
  signal: AbortSignal;
  /** Runs while leading; its signal aborts when leadership is lost or the candidate stops. */
  onStartedLeading: (leading: AbortSignal) => Promise<void> | void;
  onStoppedLeading?: () => void;
}

export class LeaderElector {
  private readonly client?: KubeClient;
  private readonly leases: LeaseStore;
  readonly identity: string;
  private readonly leaseDurationMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private leading = false;
  private readonly clock: Clock;
  /** While a candidate waits: the Lease's informer, and what to wake when the Lease is released. */
  private leaseWatch?: { stop: AbortController; released?: () => void };

  constructor(private readonly options: LeaderElectionOptions) {
    const client = options.client ?? (options.kubeconfig ? new KubeClient(options.kubeconfig) : undefined);
    this.client = client;
    if (options.leases) this.leases = options.leases;
    else if (client) this.leases = { read: (namespace, name) => client.read(LEASES, name, namespace), create: (lease) => client.create(LEASES, lease), update: (lease) => client.update(LEASES, lease) };
    else throw new Error('leader election needs a client, a kubeconfig or a lease store');
    // In a pod that knows its name (POD_NAME from the downward API), the pod: a container
    // restarted in the same pod takes its own Lease straight back instead of waiting for it to
    // expire. Elsewhere the host ($HOSTNAME first: a hostNetwork pod's node) and the process.
    this.identity = options.identity ?? (process.env.POD_NAME || `${process.env.HOSTNAME || hostname()}_${process.pid}`);
    this.clock = options.clock ?? realClock;
    this.leaseDurationMs = options.leaseDurationMs ?? 137_000;
    this.renewDeadlineMs = options.renewDeadlineMs ?? 107_000;
    this.retryPeriodMs = options.retryPeriodMs ?? 26_000;
    if (this.renewDeadlineMs >= this.leaseDurationMs) throw new Error('renewDeadline must be shorter than leaseDuration');
  }

  isLeader(): boolean {
    return this.leading;
  }

  /** Tries to take or renew the Lease once; true when this candidate holds it afterwards. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name } = this.options;
    const now = new Date(this.clock.now());
    const durationSeconds = Math.max(1, Math.round(this.leaseDurationMs / 1000));
    const lease = await this.leases.read(namespace, name);
    if (!lease) {
      const stamp = rfc3339Micro(now);
      const create = () => this.leases.create({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name, namespace },
        spec: { holderIdentity: this.identity, leaseDurationSeconds: durationSeconds, acquireTime: stamp, renewTime: stamp, leaseTransitions: 0 },
      });
      try {
        try {
          await create();
        } catch (err) {
          // The namespace is made only when missing: a component whose role grants leases but
          // not namespaces (the cloud-controller-manager's) must still be able to lead.
          if (!isNotFound(err) || !this.client) throw err;
          await this.ensureNamespace(this.client);
          await create();
        }
        return true;
      } catch (err) {
        if (isConflict(err)) return false;
        throw err;
      }
    }
    const spec: NonNullable<api.Lease['spec']> = lease.spec ?? {};
    const holder = spec.holderIdentity ?? '';
    const renewed = spec.renewTime ? new Date(spec.renewTime).getTime() : 0;
    const expired = renewed + (spec.leaseDurationSeconds ?? durationSeconds) * 1000 < now.getTime();
    if (holder !== this.identity && holder !== '' && !expired) return false;
    const takingOver = holder !== this.identity;
    const next: api.Lease = {
      ...lease,
      spec: {
        ...spec,
        holderIdentity: this.identity,
        leaseDurationSeconds: durationSeconds,
        renewTime: rfc3339Micro(now),
        ...(takingOver ? { acquireTime: rfc3339Micro(now), leaseTransitions: (spec.leaseTransitions ?? 0) + 1 } : {}),
      },
    };
    try {
      await this.leases.update(next);
      return true;
    } catch (e) {
      if (isConflict(e)) return false;
      throw e;
    }
  }

  private async ensureNamespace(client: KubeClient): Promise<void> {
    try {
      await client.create(NAMESPACES, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.options.namespace } });
    } catch (e) {
      if (!isConflict(e)) throw e;
    }
  }

  /** A candidate's wait before its next try: the retry period, or less if the Lease is released
   *  meanwhile (its holder cleared) or deleted. */
  private async waitAsCandidate(signal: AbortSignal): Promise<void> {
    if (!this.client) return sleepOn(this.clock, this.retryPeriodMs, signal);
    if (!this.leaseWatch) {
      const { namespace, name } = this.options;
      const watch: { stop: AbortController; released?: () => void } = { stop: new AbortController() };
      const informer = new Informer<api.Lease>(this.client, LEASES, { namespace, fieldSelector: `metadata.name=${name}`, clock: this.clock });
      informer.on((type, lease) => {
        if (type === 'delete' || !lease.spec?.holderIdentity) watch.released?.();
      });
      informer.start(watch.stop.signal);
      this.leaseWatch = watch;
    }
    const wake = new AbortController();
    this.leaseWatch.released = () => wake.abort();
    await sleepOn(this.clock, this.retryPeriodMs, AbortSignal.any([signal, wake.signal]));
    this.leaseWatch.released = undefined;
  }

  private stopLeaseWatch(): void {
    this.leaseWatch?.stop.abort();
    this.leaseWatch = undefined;
  }

  /** Gives the Lease up so another candidate can take it at once. */
  private async release(): Promise<void> {
    const { namespace, name } = this.options;
    try {
      const lease = await this.leases.read(namespace, name);
      if (lease?.spec?.holderIdentity !== this.identity) return;
      await this.leases.update({ ...lease, spec: { ...lease.spec, holderIdentity: '', leaseDurationSeconds: 1 } });
    } catch (e) {
      log.warn({ lease: `${namespace}/${name}`, error: (e as Error).message }, 'could not release the lease');
    }
  }

  /** Campaigns until the signal aborts; runs onStartedLeading each time leadership is won. */
  async run(): Promise<void> {
    const { signal } = this.options;
    const lease = `${this.options.namespace}/${this.options.name}`;
    while (!signal.aborted) {
      // Candidate: retry until the Lease is ours.
      let acquired = false;
      try {
        acquired = await this.tryAcquireOrRenew();
      } catch (e) {
        log.warn({ lease, error: (e as Error).message }, 'leader election attempt failed');
      }
      if (!acquired) {
        await this.waitAsCandidate(signal);
        continue;
      }
      this.stopLeaseWatch();
      // Stopped while the Lease was being taken (a pod told to terminate as it won): give it back
      // at once. An abort listener added now would never fire, and the Lease would stay held by a
      // process that is going away, for every successor to wait out.
      if (signal.aborted) {
        await this.release();
        break;
      }
      log.info({ lease, identity: this.identity }, 'became leader');
      this.leading = true;
      const leadership = new AbortController();
      const stopLeading = () => leadership.abort();
      signal.addEventListener('abort', stopLeading, { once: true });
      const work = Promise.resolve()
        .then(() => this.options.onStartedLeading(leadership.signal))
        .catch((e) => log.warn({ lease, error: (e as Error).message }, 'leader work failed'));
      // Leading: renew, and stop before the Lease could be taken by another.
      let lastRenew = this.clock.now();
      while (!leadership.signal.aborted) {
        await sleepOn(this.clock, this.retryPeriodMs, leadership.signal);
        if (leadership.signal.aborted) break;
        // false: someone else holds the Lease now (stop at once); an error: the API server is not
        // answering (keep trying until the renew deadline).
        let outcome: boolean | 'error';
        try {
          outcome = await this.tryAcquireOrRenew();
        } catch (e) {
          outcome = 'error';
          log.warn({ lease, error: (e as Error).message }, 'renewing the lease failed');
        }
        if (outcome === true) lastRenew = this.clock.now();
        else if (outcome === false || this.clock.now() - lastRenew >= this.renewDeadlineMs) {
          log.warn({ lease, identity: this.identity }, 'lost leadership');
          leadership.abort();
        }
      }
      this.leading = false;
      signal.removeEventListener('abort', stopLeading);
      await work;
      this.options.onStoppedLeading?.();
      if (signal.aborted) await this.release();
    }
    this.stopLeaseWatch();
  }
}
