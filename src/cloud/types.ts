// The local cloud's objects as its API returns them and its store keeps them: instances, load
// balancers and routes. Plain JSON, so the HTTP API, the store and the CLI share one shape.

/** An instance's lifecycle as a cloud reports it (EC2's words). `pending`: booting (firmware and,
 *  on first boot, Ignition); `running`: booted, its runtime started; `stopping` → `stopped`: shut
 *  down, root kept; `terminated`: gone, its root removed and its address released. */
export type InstanceState = 'pending' | 'running' | 'stopping' | 'stopped' | 'terminated';
export const INSTANCE_STATES: readonly InstanceState[] = ['pending', 'running', 'stopping', 'stopped', 'terminated'];

/** How the machine behind an instance is doing, beyond the cloud state: a reboot keeps the
 *  instance `running` (as EC2 does) while the machine is `Down` and then `Booting`. */
export type MachinePhase = 'Down' | 'Booting' | 'Up' | 'Failed';

export interface Instance {
  id: string;
  name: string;
  type: string;
  zone: string;
  region: string;
  privateIp: string;
  /** The Ignition config the machine boots from (JSON text); absent when none was given. */
  userData?: string;
  state: InstanceState;
  /** RFC 3339; when the instance was last started (EC2's LaunchTime). */
  launchTime: string;
  createdAt: string;
  /** Linux's boot ID of the current (or last) boot: a new random UUID every boot. */
  bootId?: string;
  machine: { phase: MachinePhase; message?: string; bootCount: number };
  terminatedAt?: string;
}

export interface LoadBalancerPort {
  name?: string;
  protocol: 'TCP';
  /** Port the balancer listens on at its address. */
  port: number;
  /** Port on every target that traffic goes to (a Service's NodePort). */
  targetPort: number;
  /**
   * This listener's own targets, instead of the balancer's: instance IDs or loopback IPv4
   * addresses (an NLB listener's target group of type `ip`). The install's api-int balancer
   * uses it: 6443 goes to the API server's address, 22623 to the masters.
   */
  targets?: string[];
}

export interface LoadBalancerHealthCheck {
  port: number;
  path: string;
  /** HTTP (the default, kube-proxy's health check port) or HTTPS, the certificate not verified (an API server's /readyz, as haproxy's `check-ssl verify none` and cloud balancers' HTTPS checks do). */
  protocol?: 'HTTP' | 'HTTPS';
}

export interface LoadBalancer {
  name: string;
  /** Virtual IP: 127.0.200.0/24, or 127.0.100.0/24 for an internal balancer. */
  address: string;
  /** Reachable only inside the cluster (AWS's `internal` scheme): its address is in 127.0.100.0/24. */
  internal?: boolean;
  ports: LoadBalancerPort[];
  /** Instance IDs traffic is spread over. */
  targets: string[];
  /** Client CIDRs allowed (empty: everyone). */
  sourceRanges: string[];
  /** Send traffic only to targets answering 200 to GET http://<target IP>:<port><path> (absent:
   *  every target), as cloud balancers check kube-proxy's healthCheckNodePort. */
  healthCheck?: LoadBalancerHealthCheck;
  createdAt: string;
  updatedAt: string;
  /** What carries the balancer: in the API's answers only, never stored. */
  engine?: LoadBalancerEngineInfo;
}

/** The engine carrying a cloud's balancers: haproxy, the kernel (nftables, when asked for), or the Node proxy with the reason (haproxy missing). */
export interface LoadBalancerEngineInfo {
  name: LoadBalancerEngineName;
  reason?: string;
}

export interface Route {
  name: string;
  /** Pod CIDR routed to the target, e.g. 127.1.3.0/24. */
  destinationCidr: string;
  targetInstance: string;
  createdAt: string;
}

/** What carries the load balancers' traffic (load-balancer-engine.ts chooses it). */
export type LoadBalancerEngineName = 'haproxy' | 'nftables' | 'node';

export interface LoadBalancerEngine {
  readonly name: LoadBalancerEngineName;
  /** Why this engine carries the balancers (the fallback's reason), for the log and the API. */
  readonly reason?: string;
  /** Makes the data plane match `balancers`: listeners opened, changed, closed. */
  sync(balancers: LoadBalancer[]): Promise<void>;
  /** The addresses listened on (address:port), sorted. */
  listening(): string[];
  /** Stops carrying traffic: every listener and connection closed (haproxy: its process stopped). */
  closeAll(): Promise<void>;
}
