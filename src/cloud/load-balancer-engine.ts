// Which engine carries the local cloud's load balancers: Debian's haproxy (haproxy.ts), run and
// reconfigured by the cloud as Cluster API's docker provider runs it, when the program is there;
// else the cloud's own userspace TCP proxy (load-balancer-proxy.ts), with a warning in the cloud's
// log saying so and what to install. Both follow the stored balancers through `sync` and carry the
// same semantics (round-robin, a refusing target skipped, source ranges, HTTP(S) health checks
// failing open, draining of targets that leave). Asked for by name, the kernel carries them instead
// (nftables.ts: destination NAT, no process in the data path; a refusing target is skipped only
// after its next check, so it is not the default).
import type { Logger } from '../common/log.js';
import { findProgram } from '../common/programs.js';
import { HaproxyBalancers } from './haproxy.js';
import { LoadBalancerProxies } from './load-balancer-proxy.js';
import { NftablesBalancers, findNft, nftablesUnusable } from './nftables.js';
import type { LoadBalancerEngine, LoadBalancerEngineName } from './types.js';

export type { LoadBalancerEngine, LoadBalancerEngineName } from './types.js';

export interface EngineOptions {
  /** `auto` (the default): haproxy when found, else the Node proxy; `haproxy`, `nftables` (the kernel) or `node`: that one, or an error saying why it cannot run. */
  engine?: 'auto' | LoadBalancerEngineName;
  /** The nft program (default: `nft` on PATH, or /usr/sbin/nft). */
  nftBinary?: string;
  /** The haproxy program (default: `haproxy` on PATH, or /usr/sbin/haproxy). */
  haproxyBinary?: string;
  /** Where haproxy's configuration, sockets and log live (0700). */
  dir: string;
  /** A target instance's private IP, or undefined when it has none (gone). */
  resolve: (instanceId: string) => string | undefined;
  log: Logger;
}

/** The haproxy program to run: `binary` (a path, or a name looked up on PATH), else `haproxy` on PATH or in /usr/sbin. */
export function findHaproxy(binary = 'haproxy'): string | undefined {
  return findProgram(binary);
}

export function loadBalancerEngine(opts: EngineOptions): LoadBalancerEngine {
  const mode = opts.engine ?? 'auto';
  if (mode === 'nftables') {
    const binary = findNft(opts.nftBinary);
    const unusable = nftablesUnusable(binary, opts.dir);
    if (unusable || !binary) throw new Error(unusable);
    return new NftablesBalancers({ binary, dir: opts.dir, resolve: opts.resolve, log: opts.log });
  }
  if (mode !== 'node') {
    const binary = findHaproxy(opts.haproxyBinary);
    if (binary) return new HaproxyBalancers({ binary, dir: opts.dir, resolve: opts.resolve, log: opts.log });
    const missing = `haproxy is not installed (${opts.haproxyBinary ?? 'haproxy'} not found)`;
    if (mode === 'haproxy') throw new Error(missing);
    const reason = `${missing}: the load balancers run on the cloud's own Node proxy instead (apt-get install haproxy for the real engine)`;
    opts.log.warn(reason);
    return new LoadBalancerProxies(opts.resolve, reason);
  }
  return new LoadBalancerProxies(opts.resolve, 'the Node proxy was asked for');
}
