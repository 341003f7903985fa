// Parsing of HOST:PORT options shared by every server command and the component manager's flags,
// and finding a free port for a server that must keep one (across its own restarts).
import { createServer } from 'node:net';

/** A port nothing listens on at `host` right now. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, host, resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export function parseHostPort(value: string, option: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(value);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new Error(`${option} must be HOST:PORT (for example 127.0.0.1:6443), got "${value}"`);
  return { host: m[1] ?? m[2], port };
}
