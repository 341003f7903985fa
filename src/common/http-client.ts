// A small HTTP(S) client on node:http and node:https, for the components' few plain HTTP calls (the
// local cloud's API, the update service's graph, the signature store) instead of the global fetch:
// fetch is undici, whose first use compiles its WebAssembly HTTP parser and keeps some 10 MiB more
// in every process that calls it (a component is a process of its own, a dozen on each machine).
// Connections are kept alive between calls, as fetch keeps them. A failure to connect rejects with
// an Error whose `cause` is node's error (its `code`, e.g. ECONNREFUSED, and message), as fetch's
// does; a timeout rejects with a TimeoutError.
import { Agent as HttpAgent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';

export interface HttpAnswer {
  status: number;
  /** 200–299, as fetch's Response.ok. */
  ok: boolean;
  headers: IncomingHttpHeaders;
  body: Buffer;
  text(): string;
}

export interface HttpCall {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Gives up after this long, connecting and answering included (default 30 s). */
  timeoutMs?: number;
}

const agents = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

export function httpCall(url: string | URL, call: HttpCall = {}): Promise<HttpAnswer> {
  const target = typeof url === 'string' ? new URL(url) : url;
  const secure = target.protocol === 'https:';
  if (!secure && target.protocol !== 'http:') return Promise.reject(new Error(`${target.protocol} is not http or https`));
  const timeoutMs = call.timeoutMs ?? 30_000;
  return new Promise((resolve, reject) => {
    const headers = { ...call.headers, ...(call.body !== undefined ? { 'content-length': String(Buffer.byteLength(call.body)) } : {}) };
    const req = (secure ? httpsRequest : httpRequest)(target, { method: call.method ?? 'GET', headers, agent: secure ? agents.https : agents.http }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', (e) => reject(failed(target, e)));
      res.on('end', () => {
        clearTimeout(timer);
        const body = Buffer.concat(chunks);
        const status = res.statusCode ?? 0;
        resolve({ status, ok: status >= 200 && status < 300, headers: res.headers, body, text: () => body.toString('utf8') });
      });
    });
    const timer = setTimeout(() => {
      const e = new Error('The operation was aborted due to timeout');
      e.name = 'TimeoutError';
      req.destroy(e);
    }, timeoutMs);
    req.on('error', (e) => {
      clearTimeout(timer);
      reject(e.name === 'TimeoutError' ? e : failed(target, e));
    });
    req.end(call.body);
  });
}

/** A network failure as fetch shapes it: node's error as the cause. */
function failed(target: URL, cause: Error): Error {
  return new Error(`${target.origin}: ${cause.message}`, { cause });
}
