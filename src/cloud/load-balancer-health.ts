// Health checks of the local cloud's load balancers, as cloud balancers run them against
// kube-proxy's healthCheckNodePort (HTTP) or an API server's /readyz (HTTPS): for a balancer with a
// `healthCheck`, every target instance is asked GET http(s)://<private IP>:<port><path> every few
// seconds, and only targets whose last answer
// was a 200 within the timeout get new connections (kube-proxy answers 200 on nodes with a ready
// local endpoint of the Service, 503 elsewhere). A target not checked yet counts as unhealthy; the
// first round runs as soon as the balancer is seen. When no target is healthy the balancer fails
// open — every target gets traffic — as AWS's and GCP's network balancers do (so a cluster whose
// nodes do not serve the health check port yet keeps working as with policy Cluster). Balancers
// without a healthCheck send to every target, unchecked.
import { type IncomingMessage, request } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { targetAddress } from './requests.js';
import type { LoadBalancer } from './types.js';

export const HEALTH_CHECK_INTERVAL_MS = 2_000;
const HEALTH_CHECK_TIMEOUT_MS = 1_000;

interface Checked {
  /** What the check was started for: a change restarts it. */
  spec: string;
  timer: NodeJS.Timeout;
  running: boolean;
  /** Instance IDs whose last answer was 200. */
  healthy: Set<string>;
}

/** True when GET http(s)://host:port/path answers 200 within the timeout (HTTPS: the certificate is not verified, as a balancer's check does not). */
export function probe(host: string, port: number, path: string, timeoutMs = HEALTH_CHECK_TIMEOUT_MS, protocol: 'HTTP' | 'HTTPS' = 'HTTP'): Promise<boolean> {
  return new Promise((resolve) => {
    const options = { host, port, path, method: 'GET', timeout: timeoutMs, agent: false as const };
    const send = protocol === 'HTTPS' ? (cb: (res: IncomingMessage) => void) => httpsRequest({ ...options, rejectUnauthorized: false }, cb) : (cb: (res: IncomingMessage) => void) => request(options, cb);
    const req = send((res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve(false));
    req.end();
  });
}

export class LoadBalancerHealthChecks {
  private readonly checks = new Map<string, Checked>();

  /** `resolve` gives a target instance's private IP, or undefined when it has none (gone). */
  constructor(private readonly resolve: (instanceId: string) => string | undefined, private readonly intervalMs = HEALTH_CHECK_INTERVAL_MS) {}

  /** A check per balancer with a healthCheck; restarted when its check or targets change, stopped when it goes. */
  sync(balancers: LoadBalancer[]): void {
    const wanted = new Map(balancers.filter((lb) => lb.healthCheck).map((lb) => [lb.name, lb]));
    for (const [name, c] of this.checks) {
      const lb = wanted.get(name);
      if (!lb || specOf(lb) !== c.spec) this.stopOne(name);
    }
    for (const [name, lb] of wanted) {
      if (this.checks.has(name)) continue;
      const checked: Checked = { spec: specOf(lb), running: false, healthy: new Set(), timer: setInterval(() => void this.round(lb, checked), this.intervalMs) };
      checked.timer.unref();
      this.checks.set(name, checked);
      void this.round(lb, checked);
    }
  }

  /** The targets of `lb` that may get a new connection: the healthy ones, or all when none is. */
  usable(lb: LoadBalancer): string[] {
    if (!lb.healthCheck) return lb.targets;
    const healthy = this.checks.get(lb.name)?.healthy;
    const passing = lb.targets.filter((id) => healthy?.has(id));
    return passing.length > 0 ? passing : lb.targets;
  }

  stop(): void {
    for (const name of [...this.checks.keys()]) this.stopOne(name);
  }

  private stopOne(name: string): void {
    clearInterval(this.checks.get(name)?.timer);
    this.checks.delete(name);
  }

  private async round(lb: LoadBalancer, checked: Checked): Promise<void> {
    if (checked.running || !lb.healthCheck) return;
    checked.running = true;
    try {
      const { port, path, protocol } = lb.healthCheck;
      await Promise.all(lb.targets.map(async (id) => {
        const ip = targetAddress(id, this.resolve);
        if (ip !== undefined && (await probe(ip, port, path, HEALTH_CHECK_TIMEOUT_MS, protocol))) checked.healthy.add(id);
        else checked.healthy.delete(id);
      }));
    } finally {
      checked.running = false;
    }
  }
}

const specOf = (lb: LoadBalancer) => JSON.stringify([lb.healthCheck, lb.targets]);
