// Parsing of HOST:PORT options shared by every server command and the component manager's flags,
// and finding a free port for a server that must keep one (across its own restarts).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The lowest port the kernel hands out to outgoing connections (Linux: ip_local_port_range). */
export function ephemeralPortsStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 1024) return low;
  } catch {
    // Not Linux, or no /proc: the IANA range's start.
  }
  return 49152;
}

/** Where freePort looks first: from here up to the ephemeral range. */
const FIRST_PORT = 20000;

/**
 * A port nothing listens on at `host` right now, for a server that binds it a moment later (or
 * keeps it across its own restarts). Taken at random below the kernel's ephemeral range, as
 * Kubernetes' own ports are: a port the kernel handed out (listen on port 0) is one it may hand
 * to any outgoing connection before the server binds it, or after it restarts. Falls back to the
 * kernel's choice when nothing below the range is free.
 */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return freePortBetween(host, FIRST_PORT, ephemeralPortsStart());
}

/** freePort's search: 50 random tries in [first, end), then the kernel's choice. */
export async function freePortBetween(host: string, first: number, end: number): Promise<number> {
  if (end > first) {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = first + Math.floor(Math.random() * (end - first));
      if (await canListen(host, port)) return port;
    }
  }
  return listenOnce(host, 0);
}

async function canListen(host: string, port: number): Promise<boolean> {
  try {
    await listenOnce(host, port);
    return true;
  } catch {
    return false;
  }
}

/** Listens on `port` (0: the kernel's choice), closes, and says which port it was. */
async function listenOnce(host: string, port: number): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, host, resolve));
  const bound = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return bound;
}

export function parseHostPort(value: string, option: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`${option} must be HOST:PORT (for example 127.0.0.1:6443), got "${value}"`);
  return { host: m[1] ?? m[2], port };
}
