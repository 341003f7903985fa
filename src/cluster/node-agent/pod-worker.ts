// One pod on the node, from the moment it is bound here until it is gone: its sandbox directory
// (the pod's filesystem view, $BOSUN_IN_CLUSTER_ROOT: the service-account token, CA and
// namespace; hostPath, emptyDir, ConfigMap and Secret volumes linked at their mount paths, the latter kept up to date;
// a persistentVolumeClaim volume as the directory of its bound hostPath or local PersistentVolume), its
// init containers run one after the other to completion first (a failed one retried under the
// pod's restart policy, or failing the pod under Never; a sidecar — restartPolicy Always — started
// and kept running beside the rest), and then one loop per container — a process restarted under
// the restart policy with the crash-loop back-off and probed (exec probes in its environment), or,
// for images that are not bosun's, a simulated container that is Running and Ready at once
// (kwok-style; a Job's completes at once, exit code 0).
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import type * as api from '../../api/index.js';
import { resourcePath, resources, SERVICE_ACCOUNT_DIR, type EventKind, type EventRecorder, type KubeClient } from '../../kube/index.js';
import { ContainerProcess, type ContainerRun, type ProcessExit } from './container-process.js';
import { ContainerThread } from './container-thread.js';
import { componentArgv, containerEnv, containerKind, echoPort, ownedByJob } from './pod-spec.js';
import { completedState, crashBackoffMs, initRestartPolicy, restarts, terminatedState, type ContainerRecord } from './pod-status.js';
import { Prober } from './probes.js';
import type { ExecTarget } from './exec-session.js';
import { rfc3339 } from '../../common/time.js';

const TOKEN_SECONDS = 3607;
/** How often ConfigMap and Secret volumes are brought up to date with their objects (the kubelet's sync period, shortened). */
const KEY_VOLUME_RESYNC_MS = 10_000;
/** A container that ran this long without crashing starts its back-off afresh (the kubelet's 2 × max). */
const BACKOFF_RESET_MS = 10 * 60_000;

export interface PodContext {
  /** The API; none for a static pod run before (or without) it, which may not refer to API objects. */
  client?: KubeClient;
  root: string;
  nodeName: string;
  nodeIP: string;
  apiServer: { host: string; port: string; caPem: string };
  /** The command line that runs a bosun component with the given subcommand argv. */
  componentCommand: (argv: string[]) => string[];
  /** The bosun subcommands whose containers run as threads of the agent's process, not processes (container-thread.ts). */
  threadComponents?: ReadonlySet<string>;
  echoCommand: string[];
  backoff: { baseMs: number; maxMs: number };
  /** Events about pods, as the kubelet records them (Started, Killing, BackOff, Unhealthy, …). */
  events: Pick<EventRecorder, 'event'>;
  log: Logger;
  /** The pod's status changed: write it. */
  onChange: () => void;
}

const now = () => rfc3339();

/** A container's record as the worker starts: what it was before (a reboot, an agent restart) counted. */
function recordFor(c: api.Container, previous: api.ContainerStatus[], waiting: string): ContainerRecord {
  const before = previous.find((s) => s.name === c.name);
  // A container that ran before (the machine rebooted, the agent restarted) counts its restart.
  const restartCount = (before?.restartCount ?? 0) + (before?.state?.running || before?.state?.terminated ? 1 : 0);
  // What it last was: stopped by the shutdown (terminated), or gone with the machine (Unknown, as kube reports it).
  const lastState = before?.state?.terminated ? { terminated: before.state.terminated }
    : before?.state?.running ? { terminated: { exitCode: 255, reason: 'Unknown', startedAt: before.state.running.startedAt, finishedAt: now() } }
    : (before?.lastState ?? {});
  // The image is required by the API server's validation of the pod.
  return { name: c.name, image: c.image ?? '', containerID: '', restartCount, state: { waiting: { reason: waiting } }, lastState, ready: false, started: false };
}

export class PodWorker {
  readonly records: ContainerRecord[];
  readonly inits: ContainerRecord[];
  /** Stopped for good because the pod is being deleted: its status reports a terminal phase. */
  terminal = false;
  private readonly processes = new Set<ContainerRun>();
  /** The process of each container running as one, by container name (for the resource metrics). */
  readonly pids = new Map<string, number>();
  /** Each container running as a thread of this process, by container name (for the resource metrics). */
  readonly threads = new Map<string, ContainerRun>();
  /** Each running container's environment and root, by container name: what `kubectl exec` runs in (exec-session.ts). */
  private readonly execTargets = new Map<string, ExecTarget>();
  readonly startTime = now();
  /** When the agent first saw the pod (ms), for kubelet_pod_start_duration_seconds. */
  readonly seenAt = Date.now();
  private readonly stopper = new AbortController();
  private graceMs = 30_000;
  private loops: Promise<void>[] = [];
  private tokenTimer?: NodeJS.Timeout;
  private volumeTimer?: NodeJS.Timeout;
  readonly dir: string;

  constructor(public pod: api.Pod, readonly podIP: string, private readonly ctx: PodContext) {
    this.dir = join(ctx.root, 'var/lib/kubelet/pods', pod.metadata.uid ?? '');
    const initSpecs: api.Container[] = pod.spec?.initContainers ?? [];
    this.inits = initSpecs.map((c) => ({ ...recordFor(c, pod.status?.initContainerStatuses ?? [], 'PodInitializing'), restartable: c.restartPolicy === 'Always' }));
    // App containers wait for the init containers as kubelet reports it: PodInitializing.
    this.records = (pod.spec?.containers ?? []).map((c) => recordFor(c, pod.status?.containerStatuses ?? [], initSpecs.length ? 'PodInitializing' : 'ContainerCreating'));
  }

  /** Where a command exec'd in `container` runs, while the container runs. */
  execTarget(container: string): ExecTarget | undefined {
    return this.execTargets.get(container);
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
    this.loops.push(this.run());
  }

  private async run(): Promise<void> {
    const signal = this.stopper.signal;
    const containers = this.pod.spec?.containers ?? [];
    const initSpecs: api.Container[] = this.pod.spec?.initContainers ?? [];
    if ([...initSpecs, ...containers].some((c) => containerKind(c.image ?? '') !== 'simulated')) {
      for (let attempt = 1; ; attempt++) {
        try {
          await this.prepareSandbox();
          break;
        } catch (e) {
          const message = `failed to set up the pod sandbox: ${(e as Error).message}`;
          this.ctx.log.warn({ pod: `${this.pod.metadata.namespace}/${this.pod.metadata.name}`, err: message }, 'pod sandbox not ready; retrying');
          for (const r of [...this.inits, ...this.records]) this.set(r, { state: { waiting: { reason: 'ContainerCreating', message } } });
          this.event('Warning', 'FailedCreatePodSandBox', message);
          await sleep(crashBackoffMs(attempt, this.ctx.backoff.baseMs, this.ctx.backoff.maxMs), signal);
          if (signal.aborted) return;
        }
      }
    }
    const loop = (c: api.Container, r: ContainerRecord, policy: string | undefined) => this.runContainer(c, r, policy).catch((e) => {
      this.ctx.log.error({ pod: this.pod.metadata.name, container: c.name, err: (e as Error).message }, 'container loop failed');
    });
    for (const [i, c] of initSpecs.entries()) {
      const r = this.inits[i];
      if (r.restartable) {
        this.loops.push(loop(c, r, 'Always'));
        while (!r.started && !signal.aborted) await sleep(100, signal);
        continue;
      }
      await loop(c, r, initRestartPolicy(this.pod, r));
      // Stopped, or failed for good (restartPolicy Never: the pod is Failed); app containers never start.
      if (signal.aborted || r.state.terminated?.exitCode !== 0) return;
    }
    await Promise.all(containers.map((c, i) => loop(c, this.records[i], this.pod.spec?.restartPolicy)));
  }

  /** A deletion's grace period cut short while the containers stop: they are killed within the new one. */
  shortenGrace(graceMs: number): void {
    if (!this.stopper.signal.aborted || graceMs >= this.graceMs) return;
    this.graceMs = graceMs;
    for (const proc of this.processes) void proc.stop(graceMs);
  }

  /**
   * Stops every container (SIGTERM, `graceMs`, SIGKILL) and removes the sandbox's secrets. A pod
   * being deleted then ends in a terminal phase (as the kubelet reports it before deleting it):
   * its simulated containers count as completed.
   */
  async stop(graceMs: number, deleting = false): Promise<void> {
    this.graceMs = graceMs;
    this.stopper.abort();
    clearTimeout(this.tokenTimer);
    clearInterval(this.volumeTimer);
    await Promise.all(this.loops);
    if (!deleting) return;
    this.terminal = true;
    const at = now();
    for (const r of [...this.inits, ...this.records]) {
      if (r.state.running) r.state = { terminated: completedState(r.state.running.startedAt, at, r.containerID) };
      r.ready = false;
    }
    this.ctx.onChange();
  }

  private async prepareSandbox(): Promise<void> {
    mkdirSync(this.rootfs, { recursive: true });
    if (this.pod.spec?.automountServiceAccountToken !== false) {
      const sa = join(this.rootfs, SERVICE_ACCOUNT_DIR);
      mkdirSync(sa, { recursive: true });
      writeFileSync(join(sa, 'ca.crt'), this.ctx.apiServer.caPem);
      writeFileSync(join(sa, 'namespace'), this.pod.metadata.namespace ?? '');
      await this.refreshToken();
    }
    const volumes = new Map<string, api.Volume>((this.pod.spec?.volumes ?? []).map((v) => [v.name, v]));
    for (const container of this.pod.spec?.containers ?? []) {
      for (const mount of container.volumeMounts ?? []) {
        const volume = volumes.get(mount.name);
        let target: string | undefined;
        if (volume?.hostPath) target = join(this.ctx.root, volume.hostPath.path);
        else if (volume?.emptyDir) target = join(this.dir, 'volumes/kubernetes.io~empty-dir', volume.name);
        else if (volume?.configMap || volume?.secret) target = await this.writeKeyVolume(volume);
        else if (volume?.persistentVolumeClaim) target = await this.claimedVolume(volume.persistentVolumeClaim.claimName);
        if (!target) continue;
        if (volume?.hostPath) prepareHostPath(target, volume.hostPath.type ?? '', volume.hostPath.path);
        else if (!volume?.persistentVolumeClaim) mkdirSync(target, { recursive: true });
        const link = join(this.rootfs, mount.mountPath);
        mkdirSync(dirname(link), { recursive: true });
        rmSync(link, { recursive: true, force: true });
        symlinkSync(target, link);
      }
    }
    // As the kubelet does, ConfigMap and Secret volumes follow their objects while the pod runs
    // (Prometheus's configuration, a renewed serving certificate).
    clearInterval(this.volumeTimer);
    this.volumeTimer = setInterval(() => void this.refreshKeyVolumes(), KEY_VOLUME_RESYNC_MS);
  }

  private async refreshKeyVolumes(): Promise<void> {
    if (this.stopper.signal.aborted) return;
    for (const volume of this.pod.spec?.volumes ?? []) {
      if (!volume.configMap && !volume.secret) continue;
      await this.writeKeyVolume(volume).catch((e: Error) => this.ctx.log.warn({ pod: `${this.pod.metadata.namespace}/${this.pod.metadata.name}`, volume: volume.name, err: e.message }, 'cannot update the volume; keeping its files'));
    }
  }

  /**
   * A persistentVolumeClaim volume: the directory of the PersistentVolume the claim is bound to,
   * in the machine root — a hostPath volume's path (made as its type asks), or a local volume's.
   * A claim not bound yet fails the sandbox, which is retried (the kubelet waits for it too).
   */
  private async claimedVolume(claimName: string): Promise<string> {
    const client = apiClient(this.ctx, `persistentVolumeClaim volume ${claimName}`);
    const namespace = this.pod.metadata.namespace;
    const claim = await client.read(resources.persistentVolumeClaims, claimName, namespace);
    if (!claim) throw new Error(`persistentvolumeclaim "${claimName}" not found`);
    const volumeName = claim.spec?.volumeName;
    if (!volumeName || claim.status?.phase !== 'Bound') throw new Error(`persistentvolumeclaim "${claimName}" is not bound`);
    const volume = await client.read(resources.persistentVolumes, volumeName);
    if (!volume) throw new Error(`persistentvolume "${volumeName}" of claim "${claimName}" not found`);
    const source = volume.spec?.hostPath ?? volume.spec?.local;
    if (!source) throw new Error(`persistentvolume "${volumeName}" has no hostPath or local source, the only ones this node can mount`);
    const target = join(this.ctx.root, source.path);
    prepareHostPath(target, volume.spec?.hostPath ? (volume.spec.hostPath.type ?? '') : 'Directory', source.path);
    return target;
  }

  /** A ConfigMap or Secret volume: its keys (or the items asked for) as files, with the volume's mode. */
  private async writeKeyVolume(volume: api.Volume): Promise<string | undefined> {
    const secret = Boolean(volume.secret);
    // The caller checked that the volume is a Secret or a ConfigMap one.
    const source = (volume.secret ?? volume.configMap)!;
    // The name is required by the API server's validation of the pod.
    const name = (volume.secret ? volume.secret.secretName : volume.configMap?.name) ?? '';
    const dir = join(this.dir, `volumes/kubernetes.io~${secret ? 'secret' : 'configmap'}`, volume.name);
    const namespace = this.pod.metadata.namespace;
    const client = apiClient(this.ctx, `${secret ? 'secret' : 'configmap'} volume ${volume.name}`);
    const object = secret ? await client.read(resources.secrets, name, namespace) : await client.read(resources.configMaps, name, namespace);
    if (!object && !source.optional) throw new Error(`${secret ? 'secret' : 'configmap'} "${name}" not found`);
    const data: Record<string, Buffer> = {};
    for (const [k, v] of Object.entries(object?.data ?? {})) data[k] = secret ? Buffer.from(v, 'base64') : Buffer.from(v);
    const binaryData = object && 'binaryData' in object ? object.binaryData : undefined;
    for (const [k, v] of Object.entries(binaryData ?? {})) data[k] = Buffer.from(v, 'base64');
    mkdirSync(dir, { recursive: true });
    const items: Array<{ key: string; path: string; mode?: number }> = source.items ?? Object.keys(data).map((key) => ({ key, path: key }));
    const wanted = new Set<string>();
    for (const item of items) {
      if (!(item.key in data)) {
        if (source.optional) continue;
        throw new Error(`key ${item.key} not found in ${secret ? 'Secret' : 'ConfigMap'} ${this.pod.metadata.namespace}/${name}`);
      }
      const file = join(dir, item.path);
      wanted.add(item.path.split('/')[0]);
      // Rewritten only when it changed, and whole (a new file renamed over the old one), so a
      // process watching the file never reads half of it.
      if (existsSync(file) && readFileSync(file).equals(data[item.key])) continue;
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(`${file}.updating`, data[item.key]);
      // The volume's mode exactly, as the kubelet's atomic writer sets it: bosun's processes run
      // under umask 077 (common/private-files.ts), which would take defaultMode's group/other bits.
      chmodSync(`${file}.updating`, item.mode ?? source.defaultMode ?? 0o644);
      renameSync(`${file}.updating`, file);
    }
    for (const entry of readdirSync(dir)) if (!wanted.has(entry)) rmSync(join(dir, entry), { recursive: true, force: true });
    return dir;
  }

  /** A bound token from TokenRequest, written to the sandbox and renewed at 80% of its life. */
  private async refreshToken(): Promise<void> {
    const { namespace, name, uid } = this.pod.metadata;
    const sa = this.pod.spec?.serviceAccountName ?? 'default';
    // The API server's TokenRequest answer, as far as it is read here.
    const tr = await apiClient(this.ctx, 'a service account token').request<{ status: { token: string; expirationTimestamp: string } }>('POST', `${resourcePath(resources.serviceAccounts, namespace, sa)}/token`, {
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

  /** Runs a container under `policy` (the pod's, or an init container's): returns once it has stopped for good. */
  private async runContainer(container: api.Container, record: ContainerRecord, policy: string | undefined): Promise<void> {
    const signal = this.stopper.signal;
    const kind = containerKind(container.image ?? '');
    const id = () => `bosun://${(this.pod.metadata.uid ?? '').slice(0, 8)}-${container.name}-${record.restartCount}`;
    if (kind === 'simulated') {
      // A simulated init container completes at once, and so does a Job's container (as kwok's
      // pod-complete stage: a Job's simulated pods would otherwise run forever, and a CronJob's
      // pile up); any other is running and ready.
      const at = now();
      if (policy !== 'Always' && (this.inits.includes(record) || ownedByJob(this.pod))) this.set(record, { containerID: id(), state: { terminated: completedState(at, at, id()) }, started: false });
      else this.set(record, { containerID: id(), state: { running: { startedAt: at } }, ready: true, started: true });
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
      // Stopped while the environment was read: no process is started (nothing would stop it).
      if (signal.aborted) return;
      const logFile = this.logFile(container.name, record.restartCount);
      // The subcommand decides (images may carry several: the machine-config server runs from the operator's).
      const subcommand = kind === 'component' ? componentArgv(container, env) : [];
      const asThread = this.ctx.threadComponents?.has(subcommand[0] ?? '') === true;
      const argv = kind === 'echo' ? this.ctx.echoCommand : asThread ? subcommand : this.ctx.componentCommand(subcommand);
      const proc: ContainerRun = asThread ? new ContainerThread({ argv, env, logFile }) : new ContainerProcess({ argv, env, cwd: this.rootfs, logFile });
      this.processes.add(proc);
      if (proc.pid !== undefined) this.pids.set(container.name, proc.pid);
      if (asThread) this.threads.set(container.name, proc);
      const execTarget: ExecTarget = { env, cwd: this.rootfs };
      this.execTargets.set(container.name, execTarget);
      void proc.exited.then(() => {
        this.processes.delete(proc);
        if (this.execTargets.get(container.name) === execTarget) this.execTargets.delete(container.name);
        if (proc.pid !== undefined && this.pids.get(container.name) === proc.pid) this.pids.delete(container.name);
        if (this.threads.get(container.name) === proc) this.threads.delete(container.name);
      });
      const startedAt = proc.startedAt;
      // With a startup probe the container is neither started nor ready until it succeeds.
      this.set(record, { containerID: id(), state: { running: { startedAt } }, ready: !container.readinessProbe && !container.startupProbe, started: !container.startupProbe });
      this.ctx.log.info({ pod: `${this.pod.metadata.namespace}/${this.pod.metadata.name}`, container: container.name, ...(asThread ? { thread: true } : { pid: proc.pid }), argv }, 'container started');
      this.event('Normal', 'Started', `Started container ${container.name}`);
      let livenessFailed = false;
      const target = { container, podIP: this.podIP, env, cwd: this.rootfs };
      const probers = [
        container.readinessProbe && new Prober(container.readinessProbe, target, false, (ok) => {
          this.set(record, { ready: ok });
          if (!ok) this.event('Warning', 'Unhealthy', 'Readiness probe failed');
        }),
        container.livenessProbe && new Prober(container.livenessProbe, target, true, (ok) => {
          if (ok) return;
          livenessFailed = true;
          this.event('Warning', 'Unhealthy', 'Liveness probe failed');
          this.event('Normal', 'Killing', `Container ${container.name} failed liveness probe, will be restarted`);
          this.ctx.log.info({ pod: this.pod.metadata.name, container: container.name }, 'liveness probe failed; restarting the container');
          void proc.stop(this.podGraceMs());
        }),
      ].filter(Boolean) as Prober[];
      // The startup probe first (kubeadm's static pods have one): liveness and readiness begin once
      // it succeeds; failureThreshold failures kill the container, as a failed liveness probe does.
      const startup: Prober | undefined = container.startupProbe && new Prober(container.startupProbe, target, undefined, (ok) => {
        startup?.stop();
        if (ok) {
          this.set(record, { started: true, ready: !container.readinessProbe });
          for (const p of probers) p.start();
          return;
        }
        livenessFailed = true;
        this.event('Warning', 'Unhealthy', 'Startup probe failed');
        this.event('Normal', 'Killing', `Container ${container.name} failed startup probe, will be restarted`);
        void proc.stop(this.podGraceMs());
      });
      if (startup) startup.start();
      else for (const p of probers) p.start();
      const stopped = new Promise<'stop'>((resolve) => (signal.aborted ? resolve('stop') : signal.addEventListener('abort', () => resolve('stop'), { once: true })));
      const outcome: ProcessExit | 'stop' = await Promise.race([proc.exited, stopped]);
      startup?.stop();
      for (const p of probers) p.stop();
      if (outcome === 'stop') this.event('Normal', 'Killing', `Stopping container ${container.name}`);
      const exit = outcome === 'stop' ? await proc.stop(this.graceMs) : outcome;
      const terminated = terminatedState(exit, startedAt, id(), livenessFailed);
      if (outcome === 'stop' || !restarts(policy, exit.exitCode)) {
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
    return (this.pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
  }

  private async environment(container: api.Container, kind: 'component' | 'echo'): Promise<Record<string, string>> {
    const hostIP = this.ctx.nodeIP;
    const podEnv = await containerEnv(this.ctx.client, this.pod, container, this.podIP, hostIP);
    const { host, port } = this.ctx.apiServer;
    const base: Record<string, string> = {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: this.rootfs,
      HOSTNAME: this.pod.spec?.hostNetwork ? this.ctx.nodeName : this.pod.metadata.name,
      KUBERNETES_SERVICE_HOST: host,
      KUBERNETES_SERVICE_PORT: port,
      KUBERNETES_SERVICE_PORT_HTTPS: port,
      KUBERNETES_PORT: `tcp://${host}:${port}`,
      BOSUN_IN_CLUSTER_ROOT: this.rootfs,
      // The container's image (kubeadm's static pods carry the Kubernetes version in its tag) and,
      // for a hostNetwork pod, the machine's address: its loopback on a local machine (pod-path.ts).
      BOSUN_IMAGE: container.image ?? '',
      ...(this.pod.spec?.hostNetwork ? { BOSUN_HOST_IP: hostIP } : {}),
    };
    const echo: Record<string, string> = kind === 'echo' ? { BOSUN_ECHO_ADDRESS: this.podIP, BOSUN_ECHO_PORT: String(echoPort(container)), BOSUN_ECHO_POD_NAME: this.pod.metadata.name } : {};
    return { ...base, ...echo, ...podEnv };
  }
}

/**
 * A hostPath volume's path in the machine root, as its type asks (kubeadm mounts kubeconfig
 * files with FileOrCreate): what exists is used as it is; a missing directory is made (unset
 * type, DirectoryOrCreate, Directory — the local machine has no pre-made layout), an empty file
 * for FileOrCreate; any other missing type is an error.
 */
function prepareHostPath(target: string, type: string, path: string): void {
  if (existsSync(target)) return;
  if (type === 'FileOrCreate') {
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, '', { mode: 0o644 });
  } else if (type === '' || type === 'DirectoryOrCreate' || type === 'Directory') {
    mkdirSync(target, { recursive: true });
  } else {
    throw new Error(`hostPath ${path} (type ${type}) does not exist on the machine`);
  }
}

/** The API client a pod needs for `what`; a static pod run without the API may not need one. */
function apiClient(ctx: PodContext, what: string): KubeClient {
  if (!ctx.client) throw new Error(`${what} needs the API server, and a static pod has none (the kubelet's static pods may not refer to API objects)`);
  return ctx.client;
}

function formatDelay(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${s % 60}s` : `${s}s`;
}
