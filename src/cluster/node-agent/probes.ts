// Readiness and liveness probes of process containers, as the kubelet's prober runs them: httpGet
// (success on 200–399) and tcpSocket (a connection opens) against the pod's IP, exec (the command
// exits 0 within timeoutSeconds) run in the container's environment — its env and its root as the
// working directory, as the container's own process runs — and grpc (the gRPC health checking
// protocol's Check on the pod's IP, plaintext as the kubelet's, SERVING within timeoutSeconds).
// httpGet with scheme HTTPS does not verify the server's certificate, as the kubelet's does not; a
// probe host of localhost/127.0.0.1 (kubeadm's static pods probe their own loopback) is the pod's
// own address, since on a local machine the pod's loopback is the host's.
// A Prober tracks consecutive successes and failures against the probe's thresholds and reports
// when its verdict flips.
import { spawn } from 'node:child_process';
import type * as grpc from '@grpc/grpc-js';
import { request, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import type * as api from '../../api/index.js';
import { resolvePort } from './pod-spec.js';

/** What a probe runs against: the container, its pod's IP, and for exec probes its process environment. */
export interface ProbeTarget {
  container: api.Container;
  podIP: string;
  env?: Record<string, string>;
  cwd?: string;
}

/** Runs `command` (no shell, as the CRI's exec) and says whether it exited 0 before the timeout; a command that cannot start fails. */
export function execSucceeds(command: string[], env: Record<string, string>, cwd: string | undefined, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (command.length === 0) return resolve(false);
    const child = spawn(command[0], command.slice(1), { env, cwd, stdio: 'ignore', timeout: timeoutMs, killSignal: 'SIGKILL' });
    child.on('error', () => resolve(false));
    child.on('exit', (code) => resolve(code === 0));
  });
}

/** grpc.health.v1 (the gRPC health checking protocol), as protobuf.js's JSON descriptor. */
const HEALTH_PROTO = {
  nested: { grpc: { nested: { health: { nested: { v1: { nested: {
    HealthCheckRequest: { fields: { service: { type: 'string', id: 1 } } },
    HealthCheckResponse: {
      fields: { status: { type: 'ServingStatus', id: 1 } },
      nested: { ServingStatus: { values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } } },
    },
    Health: { methods: { Check: { requestType: 'HealthCheckRequest', responseType: 'HealthCheckResponse' } } },
  } } } } } } },
};

type HealthClient = grpc.Client & { Check(request: { service: string }, options: grpc.CallOptions, callback: (err: grpc.ServiceError | null, response?: { status: string }) => void): void };
type HealthConstructor = Omit<grpc.ServiceClientConstructor, 'new'> & (new (address: string, credentials: grpc.ChannelCredentials) => HealthClient);
let health: Promise<{ grpc: typeof grpc; Health: HealthConstructor }> | undefined;

/**
 * The gRPC client and the grpc.health.v1.Health definition, loaded on the first grpc probe only:
 * most node agents never run one, and each is a process of its own.
 */
function loadHealth(): Promise<{ grpc: typeof grpc; Health: HealthConstructor }> {
  health ??= (async () => {
    const [grpcModule, protoLoader] = await Promise.all([import('@grpc/grpc-js'), import('@grpc/proto-loader')]);
    const definition = grpcModule.loadPackageDefinition(protoLoader.fromJSON(HEALTH_PROTO as Parameters<typeof protoLoader.fromJSON>[0], { enums: String, defaults: true })) as unknown as { grpc: { health: { v1: { Health: HealthConstructor } } } };
    return { grpc: grpcModule, Health: definition.grpc.health.v1.Health };
  })();
  return health;
}

/** The grpc.health.v1.Health service definition (for servers that answer grpc probes). */
export async function healthService(): Promise<grpc.ServiceDefinition> {
  return (await loadHealth()).Health.service;
}

/** One Check call: true only for SERVING; an error, a timeout or any other status fails. */
export async function grpcHealthy(host: string, port: number, service: string, timeoutMs: number): Promise<boolean> {
  const { grpc: g, Health } = await loadHealth();
  const client = new Health(`${host.includes(':') ? `[${host}]` : host}:${port}`, g.credentials.createInsecure());
  return new Promise((resolve) => {
    client.Check({ service }, { deadline: Date.now() + timeoutMs }, (err, response) => {
      client.close();
      resolve(!err && response?.status === 'SERVING');
    });
  });
}

/** Where a probe connects: its host, or the pod's IP when it names none or the loopback. */
function probeHost(host: string | undefined, podIP: string): string {
  return !host || host === 'localhost' || host === '127.0.0.1' || host === '::1' ? podIP : host;
}

export async function probeOnce(probe: api.Probe, target: ProbeTarget): Promise<boolean> {
  const { container, podIP } = target;
  const timeoutMs = (probe.timeoutSeconds ?? 1) * 1000;
  if (probe.exec) return execSucceeds((probe.exec.command ?? []).map(String), target.env ?? {}, target.cwd, timeoutMs);
  const { httpGet, tcpSocket } = probe;
  if (httpGet) {
    const port = resolvePort(httpGet.port, container);
    if (!port) return false;
    return new Promise((resolve) => {
      const options = { host: probeHost(httpGet.host, podIP), port, path: httpGet.path ?? '/', method: 'GET', timeout: timeoutMs,
        headers: Object.fromEntries((httpGet.httpHeaders ?? []).map((h) => [h.name, h.value])) };
      const answered = (res: IncomingMessage) => {
        res.resume();
        resolve((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
      };
      const req = httpGet.scheme === 'HTTPS' ? httpsRequest({ ...options, rejectUnauthorized: false }, answered) : request(options, answered);
      req.on('timeout', () => req.destroy());
      req.on('error', () => resolve(false));
      req.end();
    });
  }
  if (tcpSocket) {
    const port = resolvePort(tcpSocket.port, container);
    if (!port) return false;
    return new Promise((resolve) => {
      const socket = connect({ host: probeHost(tcpSocket.host, podIP), port, timeout: timeoutMs });
      socket.on('connect', () => { socket.destroy(); resolve(true); });
      socket.on('timeout', () => { socket.destroy(); resolve(false); });
      socket.on('error', () => resolve(false));
    });
  }
  if (probe.grpc) {
    const port = Number(probe.grpc.port);
    if (!Number.isInteger(port) || port < 1 || port > 65535) return false;
    return grpcHealthy(podIP, port, probe.grpc.service ?? '', timeoutMs);
  }
  // A probe with no handler the kubelet knows fails (kube's prober: "missing probe handler").
  return false;
}

/** Runs a probe every periodSeconds after initialDelaySeconds; `onResult` gets each flip of the verdict (from `initial`, which may be none yet). */
export class Prober {
  private timer?: NodeJS.Timeout;
  private successes = 0;
  private failures = 0;
  /** undefined until the first verdict (a startup probe's: it reports its first success or its failure). */
  private verdict: boolean | undefined;

  constructor(
    private readonly probe: api.Probe,
    private readonly target: ProbeTarget,
    initial: boolean | undefined,
    private readonly onResult: (ok: boolean) => void,
  ) {
    this.verdict = initial;
  }

  start(): void {
    const tick = async () => {
      const ok = await probeOnce(this.probe, this.target);
      if (!this.timer) return;
      if (ok) { this.successes++; this.failures = 0; } else { this.failures++; this.successes = 0; }
      const next = ok ? (this.successes >= (this.probe.successThreshold ?? 1) ? true : this.verdict) : (this.failures >= (this.probe.failureThreshold ?? 3) ? false : this.verdict);
      if (next !== undefined && next !== this.verdict) {
        this.verdict = next;
        this.onResult(next);
      }
      if (this.timer) this.timer = setTimeout(tick, (this.probe.periodSeconds ?? 10) * 1000);
    };
    this.timer = setTimeout(tick, (this.probe.initialDelaySeconds ?? 0) * 1000);
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}
