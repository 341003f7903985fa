// The component manager (controller-runtime's Manager, library-go's controllercmd): the one way a
// bosun component runs. A manager owns, in this order,
//   kubeconfig → KubeClient → InformerFactory → EventRecorder   (made on first use, so a component
//       that never talks to a cluster — the machine-config server on a directory — needs none)
//   → leader election (optional) → metrics and health endpoints → signal handling,
// and runs a list of Runnables until it is stopped.
//
// API (stable; other components build on it):
//   const manager = new Manager({ name, kubeconfig?, metricsListen?, metricsTls?, healthListen?,
//                                 leaderElection?: { namespace, name, identity?, leaseDurationMs?,
//                                 renewDeadlineMs?, retryPeriodMs? }, eventSource?, logLevel?,
//                                 clock?, handleSignals? });
//   manager.kubeconfig / .client / .informers / .events      shared by everything it runs
//   manager.add(runnable, …)          anything with `name` and `start(signal)` (optionally `stop()`,
//                                     and `needsLeaderElection: false` for servers that run on
//                                     every replica); a toolkit Controller is one
//   manager.addMetrics(registry)      a component's own prom-client registry, served on /metrics
//   manager.addHealthCheck(name, fn) / addReadyCheck(name, fn)   fn: () => undefined | why-not
//   await manager.start(signal?)      runs until the signal aborts, stop() is called, or (with
//                                     handleSignals) SIGTERM/SIGINT; rejects when a runnable failed
//   manager.stop()                    graceful stop; start() resolves once everything has ended
//   manager.ready                     resolves once listening and informers started (tests, port 0)
//   manager.metricsAddress / .healthAddress / .isLeader()
//   manager.metricsCertificate        the certificate /metrics serves (tests trust it)
// /metrics is HTTPS only, for callers the API server authenticates (TokenReview) and authorises
// (SubjectAccessReview: get on the non-resource URL /metrics), as OpenShift serves every
// component's metrics: 401 without or with a bad token, 403 without the grant. `metricsTls`
// names the certificate files (reloaded when they change); without them the certificate is
// self-signed, made at start. The component's identity needs system:auth-delegator.
// Shared command-line flags and the short declaration of a component command: manager-flags.ts.
//
// Lifecycle: start() listens (metrics, health), starts the informers (on every replica, so a new
// leader's caches are warm), starts the runnables that need no leader, then campaigns for the
// Lease (or, without election, starts the rest at once). Each leadership term runs every leader
// runnable with a signal that aborts when the term ends; a later term starts them again (a
// Controller restarts from its caches). A runnable that fails (rejects while the manager runs)
// stops the manager — as controller-runtime does, so the process exits and is restarted — and
// /healthz says which one failed until then. Stopping: /readyz fails at once (shutdown), the
// runnables' signals abort, a leader releases its Lease, stop() hooks run, informers stop,
// listeners close.
//
// Health: /healthz and /livez: ping, runnables (none failed), plus added checks. /readyz: ping,
// informer-sync (every informer has its first list), shutdown (not stopping), plus added checks.
import type { KubeConfigLike } from './kubeconfig.js';
import { setMaxListeners } from 'node:events';
import type { Registry } from 'prom-client';
import { logger, setLogLevel } from '../common/log.js';
import { KubeClient } from './client.js';
import { type Clock, realClock } from './clock.js';
import { HealthChecks, type HealthCheck, type Listen, boundAddress, serveEndpoints } from './endpoints.js';
import { DelegatedAuth, verbForMethod } from './delegated-auth.js';
import { ServingCertificate, type ServingCertificateFiles } from './serving-certificate.js';
import { EventRecorder } from './events.js';
import { InformerFactory } from './informer.js';
import { loadKubeConfig } from './kubeconfig.js';
import { podPath } from '../common/pod-path.js';
import { LeaderElector, type LeaderElectionSettings } from './leader-election.js';
import { registry as toolkitRegistry } from './metrics.js';

export type { LeaderElectionSettings, Listen, HealthCheck };

/** Something a manager runs: a controller, a server, a loop. */
export interface Runnable {
  readonly name: string;
  /** Runs until the signal aborts (or returns earlier when its work is done); called once per
   *  leadership term for leader runnables. */
  start(signal: AbortSignal): Promise<void> | void;
  /** Runs once after the manager stopped every runnable (close listeners, flush). */
  stop?(): Promise<void> | void;
  /** false: runs on every replica, leader or not (servers). Default true. */
  readonly needsLeaderElection?: boolean;
}

export interface ManagerOptions {
  /** The component: names its logs, its events' source, its default identity. */
  name: string;
  /** A loaded kubeconfig or a file; omitted: $KUBECONFIG, ~/.kube/config, else in-cluster. */
  kubeconfig?: KubeConfigLike | string;
  /** Serve /metrics here (HTTPS, delegated authorization); omitted: not served. */
  metricsListen?: Listen;
  /** The certificate /metrics serves; omitted: a self-signed one made at start. */
  metricsTls?: ServingCertificateFiles & { reloadIntervalMs?: number };
  /** Serve /healthz, /livez and /readyz here; omitted: not served. */
  healthListen?: Listen;
  /** Run leader runnables only while holding this Lease; omitted: always run them. */
  leaderElection?: LeaderElectionSettings;
  /** The source component of the Events it records (default: name). */
  eventSource?: string;
  /** Sets every logger's level (trace … silent). */
  logLevel?: string;
  /** The clock leader election and the event recorder run on (default the wall clock). */
  clock?: Clock;
  /** Stop gracefully on SIGTERM/SIGINT (a second one exits at once). For a command's process. */
  handleSignals?: boolean;
}

interface Tracked {
  runnable: Runnable;
  failure?: Error;
}

export class Manager {
  readonly name: string;
  private kc?: KubeConfigLike;
  private kubeClient?: KubeClient;
  private factory?: InformerFactory;
  private recorder?: EventRecorder;
  private readonly runnables: Tracked[] = [];
  private readonly registries: Registry[] = [toolkitRegistry];
  private readonly live = new HealthChecks();
  private readonly readiness = new HealthChecks();
  private readonly stopper = new AbortController();
  private elector?: LeaderElector;
  private failure?: Error;
  private servers?: Awaited<ReturnType<typeof serveEndpoints>>;
  private certificate?: ServingCertificate;
  private running = false;
  private markReady!: () => void;
  /** Resolves once the endpoints listen and the informers have started. */
  readonly ready = new Promise<void>((resolve) => (this.markReady = resolve));
  private readonly log;

  /** The clock its components run on (the option's, else the wall clock). */
  get clock(): Clock {
    return this.options.clock ?? realClock;
  }

  constructor(private readonly options: ManagerOptions) {
    this.name = options.name;
    this.log = logger(options.name);
    if (options.logLevel) setLogLevel(options.logLevel);
    setMaxListeners(0, this.stopper.signal);
    this.live.add('ping', () => undefined);
    this.live.add('runnables', () => {
      const failed = this.runnables.filter((t) => t.failure);
      return failed.length ? failed.map((t) => `${t.runnable.name}: ${t.failure!.message}`).join('; ') : undefined;
    });
    this.readiness.add('ping', () => undefined);
    this.readiness.add('informer-sync', () => {
      const waiting = this.factory?.unsynced() ?? [];
      return waiting.length ? `not synced: ${waiting.join(', ')}` : undefined;
    });
    this.readiness.add('shutdown', () => (this.stopper.signal.aborted ? 'shutting down' : undefined));
  }

  get kubeconfig(): KubeConfigLike {
    if (!this.kc) this.kc = typeof this.options.kubeconfig === 'object' ? this.options.kubeconfig : loadKubeConfig(podPath(this.options.kubeconfig));
    return this.kc;
  }

  get client(): KubeClient {
    return (this.kubeClient ??= new KubeClient(this.kubeconfig, { component: this.name }));
  }

  /** Informers shared by everything this manager runs; started by start() (and at once after). */
  get informers(): InformerFactory {
    if (!this.factory) {
      this.factory = new InformerFactory(this.client, this.options.clock);
      if (this.running) this.factory.start(this.stopper.signal);
    }
    return this.factory;
  }

  get events(): EventRecorder {
    return (this.recorder ??= new EventRecorder(this.client, { component: this.options.eventSource ?? this.name, clock: this.options.clock }));
  }

  /** The signal that aborts when the manager stops. */
  get signal(): AbortSignal {
    return this.stopper.signal;
  }

  add(...runnables: Runnable[]): this {
    if (this.running) throw new Error(`${this.name}: runnables are added before start()`);
    for (const runnable of runnables) this.runnables.push({ runnable });
    return this;
  }

  addMetrics(registry: Registry): this {
    if (!this.registries.includes(registry)) this.registries.push(registry);
    return this;
  }

  addHealthCheck(name: string, check: HealthCheck): this {
    this.live.add(name, check);
    return this;
  }

  addReadyCheck(name: string, check: HealthCheck): this {
    this.readiness.add(name, check);
    return this;
  }

  isLeader(): boolean {
    return this.options.leaderElection ? (this.elector?.isLeader() ?? false) : this.running;
  }

  get metricsAddress(): string | undefined {
    return boundAddress(this.servers?.metrics);
  }

  /** The certificate /metrics serves, once started. */
  get metricsCertificate(): string | undefined {
    return this.certificate?.current().cert;
  }

  /** The checks behind /healthz and /livez (`live`) or /readyz (`ready`), for a server of the component's own. */
  healthChecks(kind: 'live' | 'ready'): HealthChecks {
    return kind === 'live' ? this.live : this.readiness;
  }

  get healthAddress(): string | undefined {
    return boundAddress(this.servers?.health);
  }

  stop(): void {
    this.stopper.abort();
  }

  async start(signal?: AbortSignal): Promise<void> {
    if (this.running || this.stopper.signal.aborted) throw new Error(`${this.name}: a manager starts once`);
    this.running = true;
    const stop = this.stopper.signal;
    const unlink = this.linkStopSources(signal);
    try {
      this.servers = await serveEndpoints({
        metrics: this.options.metricsListen && (await this.securedMetrics(this.options.metricsListen)),
        health: this.options.healthListen && { listen: this.options.healthListen, live: this.live, ready: this.readiness },
      });
      if (this.servers.metrics) this.log.info({ address: `https://${this.metricsAddress}/metrics`, certificate: this.certificate?.files?.certFile ?? 'self-signed' }, 'serving metrics');
      if (this.servers.health) this.log.info({ address: `http://${this.healthAddress}/healthz` }, 'serving health');
      this.factory?.start(stop);
      this.markReady();
      const always = this.runnables.filter((t) => t.runnable.needsLeaderElection === false);
      const leaders = this.runnables.filter((t) => t.runnable.needsLeaderElection !== false);
      const work = [this.runAll(always, stop)];
      const election = this.options.leaderElection;
      if (election && leaders.length) {
        this.elector = new LeaderElector({ client: this.client, clock: this.options.clock, ...election, signal: stop, onStartedLeading: (term) => this.runAll(leaders, term) });
        work.push(this.elector.run());
      } else work.push(this.runAll(leaders, stop));
      work.push(new Promise<void>((resolve) => (stop.aborted ? resolve() : stop.addEventListener('abort', () => resolve(), { once: true }))));
      await Promise.all(work);
      for (const { runnable } of this.runnables) {
        try {
          await runnable.stop?.();
        } catch (e) {
          this.log.warn({ runnable: runnable.name, err: (e as Error).message }, 'stopping failed');
        }
      }
      await this.factory?.stop();
    } finally {
      this.markReady();
      this.stopper.abort();
      unlink();
      await this.servers?.close();
      this.certificate?.close();
      this.log.info('stopped');
    }
    if (this.failure) throw this.failure;
  }

  /** /metrics' certificate and authorization: the API server decides who may read it. */
  private async securedMetrics(listen: Listen) {
    let auth: DelegatedAuth;
    try {
      auth = new DelegatedAuth(this.client, { clock: this.options.clock });
    } catch (e) {
      throw new Error(`metrics are served only to callers the API server authorises, which needs a kubeconfig: ${(e as Error).message}`);
    }
    this.certificate = await ServingCertificate.load(this.options.metricsTls, [listen.host], this.options.metricsTls);
    return {
      listen,
      registries: () => this.registries,
      certificate: this.certificate,
      authorize: (req: { headers: { authorization?: string }; method?: string }) => auth.check(req.headers.authorization, { nonResource: { path: '/metrics', verb: verbForMethod(req.method ?? 'GET') } }),
    };
  }

  /** Runs runnables until the signal aborts; a failure stops the whole manager. */
  private async runAll(list: Tracked[], outer: AbortSignal): Promise<void> {
    // Controllers and their workers each listen on the signal: one of our own, linked to the
    // caller's, carries any number of listeners without Node's leak warning.
    const linked = new AbortController();
    setMaxListeners(0, linked.signal);
    const signal = linked.signal;
    const abort = () => linked.abort();
    if (outer.aborted) abort();
    else outer.addEventListener('abort', abort, { once: true });
    await Promise.all(
      list.map(async (tracked) => {
        try {
          await tracked.runnable.start(signal);
        } catch (e) {
          // An error on the way out of a term or a stop is not a failure of the component.
          if (signal.aborted) return void this.log.warn({ runnable: tracked.runnable.name, err: (e as Error).message }, 'ended with an error while stopping');
          tracked.failure = e instanceof Error ? e : new Error(String(e));
          this.failure ??= new Error(`${tracked.runnable.name} failed: ${tracked.failure.message}`);
          this.log.error({ runnable: tracked.runnable.name, err: tracked.failure.message }, 'a runnable failed; stopping');
          this.stopper.abort();
        }
      }),
    );
    outer.removeEventListener('abort', abort);
  }

  /** Aborts on the caller's signal and, when asked, on SIGTERM/SIGINT; returns the unlinker. */
  private linkStopSources(signal?: AbortSignal): () => void {
    const stop = () => this.stopper.abort();
    if (signal?.aborted) stop();
    signal?.addEventListener('abort', stop, { once: true });
    let signals = 0;
    const onSignal = (name: NodeJS.Signals) => {
      if (++signals > 1) {
        this.log.warn({ signal: name }, 'second signal: exiting now');
        process.exit(1);
      }
      this.log.info({ signal: name }, 'stopping');
      stop();
    };
    if (this.options.handleSignals) for (const s of ['SIGTERM', 'SIGINT'] as const) process.on(s, onSignal);
    return () => {
      signal?.removeEventListener('abort', stop);
      if (this.options.handleSignals) for (const s of ['SIGTERM', 'SIGINT'] as const) process.off(s, onSignal);
    };
  }
}
