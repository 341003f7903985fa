// One pod on the node, from the moment it is bound here until it is gone: its sandbox directory
// (the pod's filesystem view, $BOSUN_IN_CLUSTER_ROOT: the service-account token, CA and
// namespace; hostPath, emptyDir, ConfigMap and Secret volumes linked at their mount paths), and
// one loop per container — a process restarted under the restart policy with the crash-loop
// back-off and probed, or, for images that are not bosun's, a simulated container that is Running
// and Ready at once (kwok-style).
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import { resourcePath, resources, type EventKind, type EventRecorder, type KubeClient, type Obj } from '../../kube/index.js';
import { ContainerProcess, type ProcessExit } from './container-process.js';
import { componentArgv, containerEnv, containerKind, echoPort } from './pod-spec.js';
import { crashBackoffMs, restarts, type ContainerRecord } from './pod-status.js';
import { Prober } from './probes.js';
import { rfc3339 } from '../../common/time.js';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';
const TOKEN_SECONDS = 3607;
/** A container that ran this long without crashing starts its back-off afresh (the kubelet's 2 × max). */
const BACKOFF_RESET_MS = 10 * 60_000;

export interface PodContext {
  client: KubeClient;
  root: string;
  nodeName: string;
  nodeIP: string;
  apiServer: { host: string; port: string; caPem: string };
  /** The command line that runs a bosun component with the given subcommand argv. */
  componentCommand: (argv: string[]) => string[];
  echoCommand: string[];
  backoff: { baseMs: number; maxMs: number };
  /** Events about pods, as the kubelet records them (Started, Killing, BackOff, Unhealthy, …). */
  events: EventRecorder;
  log: Logger;
  /** The pod's status changed: write it. */
  onChange: () => void;
}

const now = () => rfc3339();

export class PodWorker {
  readonly records: ContainerRecord[];
  readonly startTime = now();
  private readonly stopper = new AbortController();
  private graceMs = 30_000;
  private loops: Promise<void>[] = [];
  private tokenTimer?: NodeJS.Timeout;
  readonly dir: string;

  constructor(public pod: Obj, readonly podIP: string, private readonly ctx: PodContext) {
    this.dir = join(ctx.root, 'var/lib/kubelet/pods', pod.metadata.uid);
    const previous: Obj[] = pod.status?.containerStatuses ?? [];
    this.records = (pod.spec.containers as Obj[]).map((c) => {
      const before = previous.find((s) => s.name === c.name);
      // A container that ran before (the machine rebooted, the agent restarted) counts its restart.
      const restartCount = (before?.restartCount ?? 0) + (before?.state?.running || before?.state?.terminated ? 1 : 0);
      // What it last was: stopped by the shutdown (terminated), or gone with the machine (Unknown, as kube reports it).
      const lastState = before?.state?.terminated ? { terminated: before.state.terminated }
        : before?.state?.running ? { terminated: { exitCode: 255, reason: 'Unknown', startedAt: before.state.running.startedAt, finishedAt: now() } }
        : (before?.lastState ?? {});
      return { name: c.name, image: c.image, containerID: '', restartCount, state: { waiting: { reason: 'ContainerCreating' } }, lastState, ready: false, started: false };
    });
  }

  get rootfs(): string {
    return join(this.dir, 'rootfs');
  }

  logFile(container: string, restart: number): string {
    const { namespace, name, uid } = this.pod.metadata;
    return join(this.ctx.root, 'var/log/pods', `${namespace}_${name}_${uid}`, container, `${restart}.log`);
  }

  /** Prepares the sandbox (retried until it can be: the service account may not exist yet), then runs the containers. */
  start(): void {
    this.loops = [this.run()];
  }

  private async run(): Promise<void> {
    const signal = this.stopper.signal;
    const containers = this.pod.spec.containers as Obj[];
    if (containers.some((c) => containerKind(c.image) !== 'simulated')) {
      for (let attempt = 1; ; attempt++) {
        try {
          await this.prepareSandbox();
          break;
        } catch (e) {
          const message = `failed to set up the pod sandbox: ${(e as Error).message}`;
          this.ctx.log.warn({ pod: `${this.pod.metadata.namespace}/${this.pod.metadata.name}`, err: message }, 'pod sandbox not ready; retrying');
          for (const r of this.records) this.set(r, { state: { waiting: { reason: 'ContainerCreating', message } } });
          this.event('Warning', 'FailedCreatePodSandBox', message);
          await sleep(crashBackoffMs(attempt, this.ctx.backoff.baseMs, this.ctx.backoff.maxMs), signal);
          if (signal.aborted) return;
        }
      }
    }
    await Promise.all(containers.map((c, i) => this.runContainer(c, this.records[i]).catch((e) => {
      this.ctx.log.error({ pod: this.pod.metadata.name, container: c.name, err: (e as Error).message }, 'container loop failed');
    })));
  }

  /** Stops every container (SIGTERM, `graceMs`, SIGKILL) and removes the sandbox's secrets. */
  async stop(graceMs: number): Promise<void> {
    this.graceMs = graceMs;
    this.stopper.abort();
    clearTimeout(this.tokenTimer);
    await Promise.all(this.loops);
  }

  private async prepareSandbox(): Promise<void> {
    mkdirSync(this.rootfs, { recursive: true });
    if (this.pod.spec.automountServiceAccountToken !== false) {
      const sa = join(this.rootfs, SERVICE_ACCOUNT_DIR);
      mkdirSync(sa, { recursive: true });
      writeFileSync(join(sa, 'ca.crt'), this.ctx.apiServer.caPem);
      writeFileSync(join(sa, 'namespace'), this.pod.metadata.namespace);
      await this.refreshToken();
    }
    const volumes = new Map<string, Obj>((this.pod.spec.volumes ?? []).map((v: Obj) => [v.name, v]));
    for (const container of this.pod.spec.containers as Obj[]) {
      for (const mount of container.volumeMounts ?? []) {
        const volume = volumes.get(mount.name);
        let target: string | undefined;
        if (volume?.hostPath) target = join(this.ctx.root, volume.hostPath.path);
        else if (volume?.emptyDir) target = join(this.dir, 'volumes/kubernetes.io~empty-dir', volume.name);
        else if (volume?.configMap || volume?.secret) target = await this.writeKeyVolume(volume);
        if (!target) continue;
        mkdirSync(target, { recursive: true });
        const link = join(this.rootfs, mount.mountPath);
        mkdirSync(dirname(link), { recursive: true });
        rmSync(link, { recursive: true, force: true });
        symlinkSync(target, link);
      }
    }
  }

  /** A ConfigMap or Secret volume: its keys (or the items asked for) as files, with the volume's mode. */
  private async writeKeyVolume(volume: Obj): Promise<string | undefined> {
    const secret = Boolean(volume.secret);
    const source = volume.secret ?? volume.configMap;
    const name = secret ? source.secretName : source.name;
    const dir = join(this.dir, `volumes/kubernetes.io~${secret ? 'secret' : 'configmap'}`, volume.name);
    const object = await this.ctx.client.read(secret ? resources.secrets : resources.configMaps, name, this.pod.metadata.namespace);
    if (!object && !source.optional) throw new Error(`${secret ? 'secret' : 'configmap'} "${name}" not found`);
    const data: Record<string, Buffer> = {};
    for (const [k, v] of Object.entries<string>(object?.data ?? {})) data[k] = secret ? Buffer.from(v, 'base64') : Buffer.from(v);
    for (const [k, v] of Object.entries<string>(object?.binaryData ?? {})) data[k] = Buffer.from(v, 'base64');
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const items: Obj[] = source.items ?? Object.keys(data).map((key) => ({ key, path: key }));
    for (const item of items) {
      if (!(item.key in data)) {
        if (source.optional) continue;
        throw new Error(`key ${item.key} not found in ${secret ? 'Secret' : 'ConfigMap'} ${this.pod.metadata.namespace}/${name}`);
      }
      const file = join(dir, item.path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, data[item.key], { mode: item.mode ?? source.defaultMode ?? 0o644 });
    }
    return dir;
  }

  /** A bound token from TokenRequest, written to the sandbox and renewed at 80% of its life. */
  private async refreshToken(): Promise<void> {
    const { namespace, name, uid } = this.pod.metadata;
    const sa = this.pod.spec.serviceAccountName ?? 'default';
    const tr = await this.ctx.client.request<Obj>('POST', `${resourcePath(resources.serviceAccounts, namespace, sa)}/token`, {
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: TOKEN_SECONDS, boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name, uid } } },
    });
    writeFileSync(join(this.rootfs, SERVICE_ACCOUNT_DIR, 'token'), tr.status.token, { mode: 0o600 });
    const lifeMs = Date.parse(tr.status.expirationTimestamp) - Date.now();
    if (this.stopper.signal.aborted) return;
    this.tokenTimer = setTimeout(() => {
      this.refreshToken().catch((e) => this.ctx.log.warn({ pod: name, err: (e as Error).message }, 'failed to renew the service account token'));
    }, Math.max(10_000, lifeMs * 0.8));
  }

  private event(type: EventKind, reason: string, message: string): void {
    void this.ctx.events.event({ apiVersion: 'v1', kind: 'Pod', metadata: this.pod.metadata }, type, reason, message);
  }

  private set(record: ContainerRecord, patch: Partial<ContainerRecord>): void {
    Object.assign(record, patch);
    this.ctx.onChange();
  }

  private async runContainer(container: Obj, record: ContainerRecord): Promise<void> {
    const signal = this.stopper.signal;
    const kind = containerKind(container.image);
    const id = () => `bosun://${this.pod.metadata.uid.slice(0, 8)}-${container.name}-${record.restartCount}`;
    if (kind === 'simulated') {
      this.set(record, { containerID: id(), state: { running: { startedAt: now() } }, ready: true, started: true });
      return;
    }
    let crashes = 0;
    while (!signal.aborted) {
      let env: Record<string, string>;
      try {
        env = await this.environment(container, kind);
      } catch (e) {
        this.set(record, { state: { waiting: { reason: 'CreateContainerConfigError', message: (e as Error).message } }, ready: false });
        await sleep(this.ctx.backoff.baseMs, signal);
        continue;
      }
      const argv = kind === 'echo' ? this.ctx.echoCommand : this.ctx.componentCommand(componentArgv(container, env));
      const proc = new ContainerProcess({ argv, env, cwd: this.rootfs, logFile: this.logFile(container.name, record.restartCount) });
      const startedAt = proc.startedAt;
      this.set(record, { containerID: id(), state: { running: { startedAt } }, ready: !container.readinessProbe, started: true });
      this.ctx.log.info({ pod: `${this.pod.metadata.namespace}/${this.pod.metadata.name}`, container: container.name, pid: proc.pid, argv }, 'container started');
      this.event('Normal', 'Started', `Started container ${container.name}`);
      let livenessFailed = false;
      const probers = [
        container.readinessProbe && new Prober(container.readinessProbe, container, this.podIP, false, (ok) => {
          this.set(record, { ready: ok });
          if (!ok) this.event('Warning', 'Unhealthy', 'Readiness probe failed');
        }),
        container.livenessProbe && new Prober(container.livenessProbe, container, this.podIP, true, (ok) => {
          if (ok) return;
          livenessFailed = true;
          this.event('Warning', 'Unhealthy', 'Liveness probe failed');
          this.event('Normal', 'Killing', `Container ${container.name} failed liveness probe, will be restarted`);
          this.ctx.log.info({ pod: this.pod.metadata.name, container: container.name }, 'liveness probe failed; restarting the container');
          void proc.stop(this.podGraceMs());
        }),
      ].filter(Boolean) as Prober[];
      for (const p of probers) p.start();
      const stopped = new Promise<'stop'>((resolve) => signal.addEventListener('abort', () => resolve('stop'), { once: true }));
      const outcome: ProcessExit | 'stop' = await Promise.race([proc.exited, stopped]);
      for (const p of probers) p.stop();
      if (outcome === 'stop') this.event('Normal', 'Killing', `Stopping container ${container.name}`);
      const exit = outcome === 'stop' ? await proc.stop(this.graceMs) : outcome;
      const terminated = {
        exitCode: exit.exitCode, ...(exit.signal ? { signal: exit.signal } : {}),
        reason: exit.error ? 'StartError' : exit.exitCode === 0 ? 'Completed' : 'Error',
        ...(exit.error ? { message: exit.error } : livenessFailed ? { message: 'Container failed liveness probe' } : {}),
        startedAt, finishedAt: exit.finishedAt, containerID: id(),
      };
      if (outcome === 'stop' || !restarts(this.pod.spec.restartPolicy, exit.exitCode)) {
        this.set(record, { state: { terminated }, ready: false });
        return;
      }
      crashes = Date.parse(exit.finishedAt) - Date.parse(startedAt) > BACKOFF_RESET_MS ? 1 : crashes + 1;
      const delay = crashes <= 1 ? 0 : crashBackoffMs(crashes - 1, this.ctx.backoff.baseMs, this.ctx.backoff.maxMs);
      const { namespace, name, uid } = this.pod.metadata;
      this.set(record, {
        lastState: { terminated }, ready: false,
        state: delay > 0
          ? { waiting: { reason: 'CrashLoopBackOff', message: `back-off ${formatDelay(delay)} restarting failed container=${container.name} pod=${name}_${namespace}(${uid})` } }
          : { terminated },
      });
      if (delay > 0) this.event('Warning', 'BackOff', `Back-off restarting failed container ${container.name} in pod ${name}_${namespace}(${uid})`);
      await sleep(delay, signal);
      if (signal.aborted) return;
      record.restartCount++;
    }
  }

  private podGraceMs(): number {
    return (this.pod.spec.terminationGracePeriodSeconds ?? 30) * 1000;
  }

  private async environment(container: Obj, kind: 'component' | 'echo'): Promise<Record<string, string>> {
    const hostIP = this.ctx.nodeIP;
    const podEnv = await containerEnv(this.ctx.client, this.pod, container, this.podIP, hostIP);
    const { host, port } = this.ctx.apiServer;
    const base: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.rootfs,
      HOSTNAME: this.pod.spec.hostNetwork ? this.ctx.nodeName : this.pod.metadata.name,
      KUBERNETES_SERVICE_HOST: host,
      KUBERNETES_SERVICE_PORT: port,
      KUBERNETES_SERVICE_PORT_HTTPS: port,
      KUBERNETES_PORT: `tcp://${host}:${port}`,
      BOSUN_IN_CLUSTER_ROOT: this.rootfs,
    };
    const echo: Record<string, string> = kind === 'echo' ? { BOSUN_ECHO_ADDRESS: this.podIP, BOSUN_ECHO_PORT: String(echoPort(container)), BOSUN_ECHO_POD_NAME: this.pod.metadata.name } : {};
    return { ...base, ...echo, ...podEnv };
  }
}

function formatDelay(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s}s`;
}
