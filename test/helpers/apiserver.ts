// Starts the embedded API server in-process on 127.0.0.1 with a random port and a temporary data
// directory, and runs the real kubectl against it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { request as httpsRequest, Agent } from 'node:https';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer, type ApiServer } from '../../src/apiserver/server.js';

export interface KubectlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface TestApiServer {
  url: string;
  token: string;
  caPem: string;
  kubeconfigPath: string;
  dataDir: string;
  port: number;
  server: ApiServer;
  kubectl(args: string[], options?: { input?: string; timeoutMs?: number }): Promise<KubectlResult>;
  /** Runs kubectl, fails the test unless it exits 0, and returns its stdout. */
  kubectlOk(args: string[], input?: string): Promise<string>;
  /** Raw HTTPS request with the admin token; body objects are sent as JSON. */
  request(method: string, path: string, options?: RequestOptions): Promise<HttpResult>;
  /** Stops the server; its data directory is removed unless it was given or `keepData` is set. */
  stop(options?: { keepData?: boolean }): Promise<void>;
}

export interface RequestOptions {
  body?: unknown;
  contentType?: string;
  accept?: string;
  /** Another bearer token, or null for none. */
  token?: string | null;
  /** More request headers. */
  headers?: Record<string, string>;
}

export interface HttpResult {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** One HTTPS request to a server whose CA is `ca`. */
export function httpsJson(agent: Agent, url: string, token: string, method: string, path: string, opts: RequestOptions = {}): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.token !== null) headers.authorization = `Bearer ${opts.token ?? token}`;
    if (opts.accept) headers.accept = opts.accept;
    let body: string | undefined;
    if (opts.body !== undefined) {
      body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      headers['content-type'] = opts.contentType ?? 'application/json';
      // Node sends neither a length nor chunked framing for a DELETE body on its own.
      headers['content-length'] = String(Buffer.byteLength(body));
    }
    const req = httpsRequest(`${url}${path}`, { method, headers, agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (text += d));
      res.on('end', () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

export const KUBECTL = process.env.KUBECTL ?? 'kubectl';

export function runKubectl(kubeconfig: string, args: string[], options: { input?: string; timeoutMs?: number } = {}): Promise<KubectlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(KUBECTL, ['--kubeconfig', kubeconfig, ...args], { env: { ...process.env, KUBECONFIG: '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    // A kubectl that is done before its stdin is written to (it reads none for most commands, and
    // on a loaded machine it may exit first) makes that write fail with EPIPE: its exit code says
    // how it went, not the pipe.
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

/**
 * The data directories this helper made, until stop() removes them: whatever is left (a test that
 * never stopped its server, a file ended by --test-force-exit) goes when the test process exits.
 */
const ownDirs = new Set<string>();
process.once('exit', () => {
  for (const dir of ownDirs) rmSync(dir, { recursive: true, force: true });
});

export async function startTestApiServer(options: { dataDir?: string; compactKeep?: number; port?: number; bookmarkIntervalMs?: number; compactIntervalMs?: number; apiServiceCheckIntervalMs?: number; serviceClusterIPRange?: string } = {}): Promise<TestApiServer> {
  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 'bosun-apiserver-'));
  if (ownDir) ownDirs.add(dataDir);
  const server = await startApiServer({
    dataDir,
    host: '127.0.0.1',
    port: options.port ?? 0,
    compactKeep: options.compactKeep,
    bookmarkIntervalMs: options.bookmarkIntervalMs,
    compactIntervalMs: options.compactIntervalMs,
    apiServiceCheckIntervalMs: options.apiServiceCheckIntervalMs,
    serviceClusterIPRange: options.serviceClusterIPRange,
    logLevel: 'warn',
  });
  const agent = new Agent({ ca: server.caPem, keepAlive: true });
  return {
    url: server.url,
    token: server.token,
    caPem: server.caPem,
    kubeconfigPath: server.kubeconfigPath,
    dataDir,
    port: server.port,
    server,
    kubectl: (args, opts) => runKubectl(server.kubeconfigPath, args, opts),
    kubectlOk: async (args, input) => {
      const r = await runKubectl(server.kubeconfigPath, args, { input });
      assert.equal(r.code, 0, `kubectl ${args.join(' ')} failed: ${r.stderr}`);
      return r.stdout;
    },
    request: (method, path, opts) => httpsJson(agent, server.url, server.token, method, path, opts),
    async stop(stopOptions = {}) {
      await server.stop();
      agent.destroy();
      if (ownDir && !stopOptions.keepData) {
        rmSync(dataDir, { recursive: true, force: true });
        ownDirs.delete(dataDir);
      }
    },
  };
}

/** Opens a watch and collects its events until the server closes it or `ms` pass. */
export function collectWatch(api: Pick<TestApiServer, 'url' | 'token' | 'caPem'>, path: string, ms: number, accept?: string): Promise<{ events: any[]; closedByServer: boolean }> {
  return new Promise((resolve, reject) => {
    const agent = new Agent({ ca: api.caPem });
    const events: any[] = [];
    let buffer = '';
    let closedByServer = false;
    const req = httpsRequest(`${api.url}${path}`, { agent, headers: { authorization: `Bearer ${api.token}`, ...(accept ? { accept } : {}) } }, (res) => {
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buffer += chunk;
        let nl;
        while ((nl = buffer.indexOf('\n')) >= 0) {
          events.push(JSON.parse(buffer.slice(0, nl)));
          buffer = buffer.slice(nl + 1);
        }
      });
      res.on('end', () => {
        closedByServer = true;
        clearTimeout(timer);
        agent.destroy();
        resolve({ events, closedByServer });
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      agent.destroy();
      resolve({ events, closedByServer });
    }, ms);
    req.on('error', (e) => (closedByServer ? undefined : events.length ? undefined : reject(e)));
    req.end();
  });
}
