// Targets and clients for the load-balancer engine tests (test/cloud/*-engine.test.ts): TCP
// servers that name themselves in every answer, and connections that ask which target they reached.
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';

/** A TCP server on address:port answering every chunk with `<name>:<chunk>`. */
export async function echo(name: string, address: string, port: number): Promise<Server> {
  const server = createServer((c) => {
    c.on('data', (d) => c.write(`${name}:${d}`));
    c.on('error', () => undefined);
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, address, () => resolve()));
  return server;
}

/** A connection kept open: `say` sends a chunk and resolves with the answer (rejects on an error); `closed` once the far side has gone. */
export class Conn {
  readonly socket: Socket;
  readonly closed: Promise<void>;
  private pending: ((s: string) => void) | undefined;
  private failed: ((e: Error) => void) | undefined;

  constructor(host: string, port: number, localAddress?: string) {
    this.socket = connect({ host, port, localAddress });
    this.socket.on('error', (e) => this.failed?.(e));
    this.socket.on('data', (d) => { const p = this.pending; this.pending = undefined; p?.(String(d)); });
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
  }

  say(text: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to "${text}" within 5 s`)), 5_000);
      this.failed = (e) => { clearTimeout(timer); reject(e); };
      this.pending = (s) => { clearTimeout(timer); resolve(s); };
      this.socket.write(text);
    });
  }

  /** Which target answers this connection ("a" of "a:ping"). */
  async target(): Promise<string> {
    return (await this.say('ping')).split(':')[0];
  }
}

/** One new connection's target name, or its error code (ECONNREFUSED for a reset at connect), or 'no answer'. */
export async function once(host: string, port: number, localAddress?: string): Promise<string> {
  const c = new Conn(host, port, localAddress);
  try {
    return await c.target();
  } catch (e) {
    return (e as NodeJS.ErrnoException).code ?? 'no answer';
  } finally {
    c.socket.destroy();
  }
}

/** The targets `n` new connections reached, sorted and joined ("a,b"). */
export async function spreadOf(host: string, port: number, n = 6): Promise<string> {
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) seen.add(await once(host, port));
  return [...seen].sort().join();
}

/**
 * Targets a (127.0.0.2) and b (127.0.0.3): an echo on `targetPort` each and an HTTP health check
 * on `healthPort` answering GET /healthz 200 while `healthy` says so (a at first, not b), else 503.
 */
export async function healthCheckedTargets(targetPort: number, healthPort: number): Promise<{ healthy: Map<string, boolean>; servers: Array<Server | HttpServer> }> {
  const healthy = new Map([['a', true], ['b', false]]);
  const servers: Array<Server | HttpServer> = [];
  for (const [name, ip] of [['a', '127.0.0.2'], ['b', '127.0.0.3']]) {
    servers.push(await echo(name, ip, targetPort));
    const h = createHttpServer((req, res) => res.writeHead(req.url === '/healthz' && healthy.get(name) ? 200 : 503).end());
    await new Promise<void>((resolve) => h.listen(healthPort, ip, () => resolve()));
    servers.push(h);
  }
  return { healthy, servers };
}
