// The node agent of one booted machine: the kubelet's part, started from the files Ignition wrote
// into the machine root. It runs its static pods at once, API server or not (static-pods.ts: a
// control-plane machine's own etcd and API server are among them); waits, quietly, until the API
// server answers; gets its credentials (TLS bootstrap, then rotation), registers the Node, keeps
// its Lease and status, mirrors its static pods, runs the pods bound to it, serves their logs on
// <nodeIP>:10250 and proxies NodePorts and (loopback) cluster IPs, serving the health-check node
// ports of externalTrafficPolicy Local load balancers. A failure is retried every restartDelay, as
// systemd restarts the kubelet unit (Restart=always) — the static pods keep running meanwhile;
// stop() ends everything it started.
import { existsSync, mkdirSync, readFileSync, watch, type FSWatcher } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { release } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '../../common/log.js';
import { sleep } from '../../common/sleep.js';
import type * as api from '../../api/index.js';
import { EventRecorder, KubeClient, loadKubeConfig } from '../../kube/index.js';
import { DelegatedAuth } from '../../kube/delegated-auth.js';
import { instanceType, DEFAULT_INSTANCE_TYPE } from '../../cloud/catalogue.js';
import type { BootedMachine } from '../../cloud/machine-runtime.js';
import { selfSignedServing } from './certificates.js';
import { rotateClientCertificate, rotateServingCertificate } from './certificate-rotation.js';
import { ensureClientCredentials } from './credentials.js';
import { parseDuration, readKubeletFiles, type KubeletFiles } from './kubelet-files.js';
import { LogsServer } from './logs-server.js';
import { NodeMetrics, podViews } from './metrics.js';
import { KUBELET_PORT, type NodeFacts } from './node-object.js';
import { NodeStatusReporter } from './node-status.js';
import { PodManager } from './pod-manager.js';
import { podCidrFor } from './pod-spec.js';
import { ServiceProxy } from './service-proxy.js';
import { StaticPodRunner } from './static-pods.js';

export interface NodeAgentOptions {
  /** Lease renewal period (default 10 s, a quarter of the 40 s lease). */
  leaseRenewIntervalMs?: number;
  /** Overrides the KubeletConfiguration's nodeStatusUpdateFrequency. */
  nodeStatusUpdateMs?: number;
  /** The crash-loop back-off: first delay and cap (default 10 s and 5 min). */
  crashBackoffBaseMs?: number;
  crashBackoffMaxMs?: number;
  /** How long the agent waits before starting again after a failure (default 10 s, RestartSec). */
  restartDelayMs?: number;
  /** The command line that runs a bosun component with a subcommand argv. */
  componentCommand: (argv: string[]) => string[];
  /** The bosun subcommands whose containers run as threads of this process (container-thread.ts; default none). */
  threadComponents?: ReadonlySet<string>;
  echoCommand: string[];
  /** How often the static pod directory is read again (default 20 s, the kubelet's fileCheckFrequency). */
  staticPodCheckMs?: number;
  /** How often the API server is tried while it does not answer (default 1 s). */
  apiWaitPollMs?: number;
  /** How often the CSRs are polled while waiting for a certificate (default 1 s). */
  csrPollMs?: number;
  /** Where the client and serving certificates' renewals fall in 70–90% of their lifetimes, in [0, 1) (default random). */
  certificateRotationJitter?: () => number;
  log: Logger;
}

export class NodeAgent {
  private readonly stopper = new AbortController();
  private running?: Promise<void>;
  private pods?: PodManager;
  private proxy?: ServiceProxy;
  private logs?: LogsServer;
  private staticPods?: StaticPodRunner;
  private manifestWatch?: FSWatcher;
  readonly files: KubeletFiles;
  readonly log: Logger;

  constructor(readonly machine: BootedMachine, private readonly o: NodeAgentOptions) {
    this.files = readKubeletFiles(machine.root);
    this.log = o.log.child({ node: machine.instance.name });
  }

  get nodeName(): string {
    return this.machine.instance.name;
  }

  start(): void {
    this.staticPods = this.startStaticPods();
    this.running = this.loop();
  }

  /** The static pods run from the manifests on disk, before and without the API (as the kubelet runs them). */
  private startStaticPods(): StaticPodRunner | undefined {
    if (!this.files.staticPodPath) return undefined;
    const { root, instance } = this.machine;
    const nodeIP = instance.privateIp;
    const dir = join(root, this.files.staticPodPath);
    const kubeconfigFile = () => this.nodeKubeconfigFile();
    const runner = new StaticPodRunner({
      root, dir, nodeName: this.nodeName, nodeIP, podCIDR: podCidrFor(nodeIP, this.files.config.podCIDR),
      // Read when each pod starts: on a machine kubeadm is setting up, the kubeconfig comes later than the agent.
      get apiServer() {
        return apiServerOf(kubeconfigFile());
      },
      componentCommand: this.o.componentCommand, threadComponents: this.o.threadComponents, echoCommand: this.o.echoCommand,
      backoff: { baseMs: this.o.crashBackoffBaseMs ?? 10_000, maxMs: this.o.crashBackoffMaxMs ?? 300_000 },
      takenIPs: () => (this.pods?.pods() ?? []).filter((p) => !p.spec?.hostNetwork).map((p) => p.status?.podIP ?? '').filter(Boolean),
      checkIntervalMs: this.o.staticPodCheckMs, log: this.log,
    });
    runner.start();
    // The kubelet watches the directory (inotify): a manifest kubeadm writes runs at once.
    try {
      mkdirSync(dir, { recursive: true });
      this.manifestWatch = watch(dir, () => runner.resync());
      this.manifestWatch.on('error', () => undefined);
    } catch (e) {
      this.log.warn({ dir, err: (e as Error).message }, 'cannot watch the static pod directory; reading it every check interval');
    }
    return runner;
  }

  /** Reads the static pod directory again now (what a finished kubeadm wrote). */
  resyncStaticPods(): void {
    this.staticPods?.resync();
  }

  /** The kubeconfig that names the API server: the node's own, else the bootstrap one (host paths). */
  private nodeKubeconfigFile(): string | undefined {
    const { root } = this.machine;
    return [this.files.kubeconfigPath, this.files.bootstrapKubeconfigPath].filter((p): p is string => Boolean(p)).map((p) => join(root, p)).find((f) => existsSync(f));
  }

  /**
   * Waits until the API server answers (any HTTP answer), trying every apiWaitPollMs: on a
   * control-plane machine it is one of the static pods, still starting. Says so once, not at
   * every try.
   */
  private async waitForApiServer(signal: AbortSignal): Promise<void> {
    // kubeadm init writes kubelet.conf after the agent has started (the kubelet restarts until then).
    let file = this.nodeKubeconfigFile();
    if (!file && this.files.config.staticPodPath !== undefined && existsSync(join(this.machine.root, '/etc/kubeadm.sh'))) {
      this.log.info({ kubeconfig: this.files.kubeconfigPath }, 'waiting for kubeadm to write the kubeconfig');
      while (!file && !signal.aborted) {
        await sleep(this.o.apiWaitPollMs ?? 1000, signal);
        file = this.nodeKubeconfigFile();
      }
    }
    if (!file) return;
    const { server } = apiServerOf(file);
    if (!server) return;
    let said = false;
    while (!signal.aborted) {
      if (await answers(`${server}/healthz`)) {
        if (said) this.log.info({ server }, 'the API server answers');
        return;
      }
      if (!said) this.log.info({ server }, 'waiting for the API server to answer');
      said = true;
      await sleep(this.o.apiWaitPollMs ?? 1000, signal);
    }
    signal.throwIfAborted();
  }

  private async loop(): Promise<void> {
    const signal = this.stopper.signal;
    while (!signal.aborted) {
      try {
        await this.run(signal);
      } catch (e) {
        if (signal.aborted) break;
        this.log.error({ err: (e as Error).message }, 'node agent failed; starting again');
      }
      await this.teardown();
      await sleep(this.o.restartDelayMs ?? 10_000, signal);
    }
  }

  private async run(signal: AbortSignal): Promise<void> {
    const { root, instance } = this.machine;
    await this.waitForApiServer(signal);
    const kubeconfig = await ensureClientCredentials({
      root, nodeName: this.nodeName, kubeconfigPath: this.files.kubeconfigPath, bootstrapKubeconfigPath: this.files.bootstrapKubeconfigPath,
      signal, log: this.log, pollMs: this.o.csrPollMs,
    });
    const kc = loadKubeConfig(kubeconfig);
    const client = new KubeClient(kc);
    const cluster = kc.getCurrentCluster()!;
    const server = new URL(cluster.server);
    const caPem = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString('utf8') : cluster.caFile ? readFileSync(cluster.caFile, 'utf8') : '';

    const nodeIP = instance.privateIp;
    const podCIDR = podCidrFor(nodeIP, this.files.config.podCIDR);
    const config = this.files.config;
    const facts: NodeFacts = {
      name: this.nodeName, internalIP: nodeIP, hostname: this.nodeName,
      instanceType: instanceType(instance.type) ?? instanceType(DEFAULT_INSTANCE_TYPE)!,
      zone: instance.zone, region: instance.region, podCIDR,
      bootId: this.machine.bootId,
      machineId: readFileSync(join(root, 'etc/machine-id'), 'utf8').trim(),
      kernelVersion: release(), architecture: process.arch,
      labels: this.files.nodeLabels, registerWithTaints: this.files.registerWithTaints,
      externalCloudProvider: this.files.cloudProvider === 'external', config,
      kubeletVersion: this.files.kubernetesVersion,
    };
    const events = new EventRecorder(client, { component: 'kubelet', host: this.nodeName });
    const reporter = new NodeStatusReporter(client, facts, {
      leaseDurationSeconds: 40,
      renewIntervalMs: this.o.leaseRenewIntervalMs ?? 10_000,
      statusUpdateMs: this.o.nodeStatusUpdateMs ?? parseDuration(config.nodeStatusUpdateFrequency, 10_000),
      statusReportMs: parseDuration(config.nodeStatusReportFrequency, 5 * 60_000),
    }, events, this.log);
    const node = await reporter.register();
    signal.throwIfAborted();

    const clientCaFile = config.authentication?.x509?.clientCAFile;
    const clientCaPem = clientCaFile && existsSync(join(root, clientCaFile)) ? readFileSync(join(root, clientCaFile), 'utf8') : undefined;
    const metrics = new NodeMetrics(this.nodeName, () => podViews(this.pods?.podWorkers() ?? []));
    this.pods = new PodManager({
      client, root, nodeName: this.nodeName, nodeIP, podCIDR,
      apiServer: { host: server.hostname, port: server.port || '443', caPem },
      componentCommand: this.o.componentCommand, threadComponents: this.o.threadComponents, echoCommand: this.o.echoCommand,
      backoff: { baseMs: this.o.crashBackoffBaseMs ?? 10_000, maxMs: this.o.crashBackoffMaxMs ?? 300_000 },
      reservedIPs: () => this.staticPods?.podIPs() ?? [],
      events, log: this.log, onPodRunning: (seconds) => metrics.observePodStart(seconds),
    });
    const delegated = new DelegatedAuth(client);
    this.logs = new LogsServer(root, {
      // A static pod's logs are under its own UID (the manifest's hash), not its mirror pod's.
      pod: (ns, name) => this.staticPods?.pod(ns, name) ?? this.pods?.pods().find((p) => p.metadata.namespace === ns && p.metadata.name === name),
      authorize: (user, verb, subresource) => subjectAccessReview(client, user, { verb, resource: 'nodes', subresource, name: this.nodeName }),
      authorizeToken: (authorization, verb, subresource) => delegated.check(authorization, { resource: { verb, group: '', version: 'v1', resource: 'nodes', subresource, name: this.nodeName } }),
      metrics,
      execTarget: (ns, name, container) => this.pods?.podWorkers().find((w) => w.pod.metadata.namespace === ns && w.pod.metadata.name === name)?.execTarget(container),
    }, this.log);
    const selfSigned = await selfSignedServing(`${this.nodeName}@${Math.floor(Date.now() / 1000)}`, [nodeIP, this.nodeName]);
    await this.logs.start(nodeIP, KUBELET_PORT, { ...selfSigned, clientCaPem });
    // Stopped while starting: nothing more is started (a watch started now would never end).
    signal.throwIfAborted();
    this.proxy = new ServiceProxy(client, this.nodeName, nodeIP, this.log);
    this.log.info({ nodeIP, podCIDR }, 'node agent running');
    // The heartbeat does not wait for the pod and service caches: a node is Ready once registered.
    const staticPods = this.staticPods?.mirror(client, events, { name: this.nodeName, uid: node.metadata.uid ?? '' }, signal);
    // --rotate-certificates (rotateCertificates in KubeletConfiguration): the client certificate is renewed before it expires.
    const rotation = config.rotateCertificates
      ? rotateClientCertificate({ root, nodeName: this.nodeName, kubeconfigFile: kubeconfig, kubeconfig: kc, client, signal, log: this.log, pollMs: this.o.csrPollMs, jitter: this.o.certificateRotationJitter })
      : undefined;
    // serverTLSBootstrap: the serving certificate from kubelet-serving CSRs, renewed as it ages
    // (the self-signed one serves until the first is issued).
    const logs = this.logs;
    const serving = config.serverTLSBootstrap
      ? rotateServingCertificate({ root, nodeName: this.nodeName, hosts: [nodeIP, this.nodeName], client, signal, log: this.log, pollMs: this.o.csrPollMs, jitter: this.o.certificateRotationJitter, install: (cert, key) => logs.setServingCertificate(cert, key) })
      : undefined;
    await Promise.all([reporter.run(signal), this.pods.start(signal), this.proxy.start(signal), staticPods, rotation, serving]);
  }

  private async teardown(): Promise<void> {
    await Promise.all([this.pods?.stop(), this.proxy?.stop(), this.logs?.stop()]);
    this.pods = this.proxy = this.logs = undefined;
  }

  /** Stops the heartbeat and every pod (the machine is going down). */
  async stop(): Promise<void> {
    this.stopper.abort();
    await this.running;
    this.manifestWatch?.close();
    await Promise.all([this.teardown(), this.staticPods?.stop()]);
    this.log.info('node agent stopped');
  }
}

/** The API server a kubeconfig names and the CA it trusts it with (empty when there is no kubeconfig). */
function apiServerOf(file: string | undefined): { server: string; host: string; port: string; caPem: string } {
  if (!file) return { server: '', host: '', port: '', caPem: '' };
  try {
    const cluster = loadKubeConfig(file).getCurrentCluster()!;
    const url = new URL(cluster.server);
    const caPem = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString('utf8') : cluster.caFile && existsSync(cluster.caFile) ? readFileSync(cluster.caFile, 'utf8') : '';
    return { server: cluster.server.replace(/\/$/, ''), host: url.hostname, port: url.port || '443', caPem };
  } catch {
    return { server: '', host: '', port: '', caPem: '' };
  }
}

/**
 * Whether anything answers HTTPS at `url` within 2 s (a 401 or a 500 is an answer). Its
 * certificate is not checked here: this only asks whether the server is up; every request after
 * it verifies the server as the kubeconfig says.
 */
function answers(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpsRequest(url, { timeout: 2000, rejectUnauthorized: false }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** Asks the API server whether `user` may do what the attributes say (the kubelet's Webhook authorizer). */
async function subjectAccessReview(client: KubeClient, user: { name: string; groups: string[] }, attributes: Record<string, string>): Promise<boolean> {
  const review = await client.request<api.SubjectAccessReview>('POST', '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
    body: { apiVersion: 'authorization.k8s.io/v1', kind: 'SubjectAccessReview', spec: { user: user.name, groups: user.groups, resourceAttributes: { group: '', version: 'v1', ...attributes } } },
  });
  return review.status?.allowed === true;
}
