// The disruption observer: a process of its own (so that what it measures is the cluster, not the
// event loop of the process that runs the cluster) that, until its stdin closes, polls each
// backend twice over — a new connection for every request, and one reused keep-alive connection,
// as OpenShift's `…-new-connections` and `…-reused-connections` monitors do; a request with no
// answer within the timeout failed, and one answered but slower than `slowMs` is counted apart,
// so that a loaded machine's slowness is told from an outage — and, when asked,
// writes through the API: a ConfigMap created per write and one ConfigMap's counter patched (on
// the resourceVersion it last saw), each
// write remembered once the API server acknowledged it (2xx). When stdin ends it prints its report
// (ObserverReport, one JSON line) and exits. Started by monitor.ts; its config is argv[2] (JSON).
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { outages, type Outage, type Sample } from './intervals.js';
import { sleep } from '../../../src/common/sleep.js';

export interface Backend {
  /** e.g. "kube-api", "service-lb". */
  name: string;
  /** http(s)://host:port */
  url: string;
  path: string;
  /** PEM of the CA that signs the backend's certificate (HTTPS). */
  ca?: string;
  /** A bearer token sent with every request. */
  token?: string;
}

export interface WriterConfig {
  url: string;
  ca: string;
  token: string;
  namespace: string;
  /** The ConfigMap whose `data.value` each update sets (it must exist). */
  counter: string;
  intervalMs: number;
}

export interface ObserverConfig {
  backends: Backend[];
  /** Between the starts of two requests of one poller (default 500 ms). */
  intervalMs?: number;
  /** A request that has not answered by then failed (default 15 s). */
  timeoutMs?: number;
  /** An answer slower than this counts too in `slowOrDown` (default 3 s). */
  slowMs?: number;
  writer?: WriterConfig;
}

export type ConnectionMode = 'new' | 'reused';

export interface PollerReport {
  backend: string;
  mode: ConnectionMode;
  samples: number;
  failures: number;
  outages: Outage[];
  /** The outages counting answers slower than `slowMs` as failures too. */
  slowOrDown: Outage[];
  /** The first and last sample's start: the span observed. */
  from: number;
  to: number;
}

export interface WritesReport {
  attempted: number;
  /** Names of the ConfigMaps whose creation was acknowledged. */
  created: string[];
  /** The counter values whose update was acknowledged, in order. */
  updated: number[];
  /** Writes that failed or were not answered (not acknowledged: they may or may not have happened). */
  unacknowledged: number;
}

export interface ObserverReport {
  pollers: PollerReport[];
  writes?: WritesReport;
  /** The longest the observer's own event loop was held up (ms): a starved observer sees outages that were not there. */
  maxLagMs: number;
}

/** One request; resolves with the status and body, rejects on a connection error or the timeout. */
function send(url: URL, o: { method: string; path: string; agent: HttpAgent | false; ca?: string; token?: string; body?: string; contentType?: string; timeoutMs: number }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.agent === false) headers.connection = 'close';
    if (o.body !== undefined) { headers['content-type'] = o.contentType ?? 'application/json'; headers['content-length'] = String(Buffer.byteLength(o.body)); }
    const options = { host: url.hostname, port: url.port, path: o.path, method: o.method, headers, agent: o.agent, timeout: o.timeoutMs };
    const done = (res: IncomingMessage) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => { if (body.length < 100_000) body += d; });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      res.on('error', reject);
    };
    const req = url.protocol === 'https:' ? httpsRequest({ ...options, ca: o.ca, agent: o.agent as HttpsAgent | false }, done) : httpRequest(options, done);
    // The whole exchange is bounded, not only the connection's idle time.
    const timer = setTimeout(() => req.destroy(new Error('timeout')), o.timeoutMs);
    req.on('close', () => clearTimeout(timer));
    req.on('error', reject);
    req.end(o.body);
  });
}

function agentFor(url: URL, mode: ConnectionMode): HttpAgent | false {
  if (mode === 'new') return false;
  const options = { keepAlive: true, maxSockets: 1 };
  return url.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options);
}

async function poll(backend: Backend, mode: ConnectionMode, intervalMs: number, timeoutMs: number, slowMs: number, stopped: () => boolean): Promise<PollerReport> {
  const url = new URL(backend.url);
  const agent = agentFor(url, mode);
  const samples: Sample[] = [];
  while (!stopped()) {
    const start = Date.now();
    let sample: Sample;
    try {
      const { status } = await send(url, { method: 'GET', path: backend.path, agent, ca: backend.ca, token: backend.token, timeoutMs });
      sample = { start, end: Date.now(), ok: status >= 200 && status < 300, error: `HTTP ${status}` };
    } catch (e) {
      sample = { start, end: Date.now(), ok: false, error: (e as NodeJS.ErrnoException).code ?? (e as Error).message };
    }
    if (sample.ok) delete sample.error;
    samples.push(sample);
    await sleep(Math.max(0, start + intervalMs - Date.now()));
  }
  if (agent) agent.destroy();
  const slow = samples.map((s) => (s.ok && s.end - s.start > slowMs ? { ...s, ok: false, error: `slower than ${slowMs} ms` } : s));
  return { backend: backend.name, mode, samples: samples.length, failures: samples.filter((s) => !s.ok).length, outages: outages(samples), slowOrDown: outages(slow), from: samples[0]?.start ?? 0, to: samples[samples.length - 1]?.start ?? 0 };
}

async function write(w: WriterConfig, timeoutMs: number, stopped: () => boolean): Promise<WritesReport> {
  const url = new URL(w.url);
  const agent = new HttpsAgent({ keepAlive: true, maxSockets: 1 });
  const report: WritesReport = { attempted: 0, created: [], updated: [], unacknowledged: 0 };
  const base = `/api/v1/namespaces/${w.namespace}/configmaps`;
  // The counter's updates carry the resourceVersion the last one left (a 409 when another got in
  // between), as controllers write: a write that timed out here but reached the server later
  // cannot then overwrite a newer acknowledged one, so a counter below an acknowledged value is a
  // write the cluster lost, not a client's stale retry.
  let resourceVersion: string | undefined;
  const resourceVersionOf = (body: string) => (JSON.parse(body) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
  for (let seq = 1; !stopped(); seq++) {
    const start = Date.now();
    const attempted = report.attempted;
    try {
      if (seq % 2) {
        report.attempted++;
        const name = `write-${seq}`;
        const { status } = await send(url, { method: 'POST', path: base, agent, ca: w.ca, token: w.token, timeoutMs, body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { seq: String(seq) } }) });
        if (status === 201) report.created.push(name);
        else report.unacknowledged++;
      } else if (resourceVersion === undefined) {
        // Not a write: where the counter is now (after an update whose outcome is unknown).
        const { status, body } = await send(url, { method: 'GET', path: `${base}/${w.counter}`, agent, ca: w.ca, token: w.token, timeoutMs });
        if (status === 200) resourceVersion = resourceVersionOf(body);
      } else {
        report.attempted++;
        const sent = resourceVersion;
        resourceVersion = undefined;
        const { status, body } = await send(url, { method: 'PATCH', path: `${base}/${w.counter}`, agent, ca: w.ca, token: w.token, timeoutMs, contentType: 'application/merge-patch+json', body: JSON.stringify({ metadata: { resourceVersion: sent }, data: { value: String(seq) } }) });
        if (status === 200) {
          report.updated.push(seq);
          resourceVersion = resourceVersionOf(body);
        } else report.unacknowledged++;
      }
    } catch {
      // A write that failed or was not answered (a failed read of the counter is not one).
      if (report.attempted > attempted) report.unacknowledged++;
    }
    await sleep(Math.max(0, start + w.intervalMs - Date.now()));
  }
  agent.destroy();
  return report;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2]) as ObserverConfig;
  const intervalMs = config.intervalMs ?? 500;
  const timeoutMs = config.timeoutMs ?? 15_000;
  const slowMs = config.slowMs ?? 3_000;
  let stop = false;
  const stopped = () => stop;
  const pollers = config.backends.flatMap((b) => (['new', 'reused'] as const).map((mode) => poll(b, mode, intervalMs, timeoutMs, slowMs, stopped)));
  const writes = config.writer ? write(config.writer, timeoutMs, stopped) : undefined;
  let maxLagMs = 0;
  let expected = Date.now() + 100;
  const lag = setInterval(() => { maxLagMs = Math.max(maxLagMs, Date.now() - expected); expected = Date.now() + 100; }, 100);
  process.stdout.write('observing\n');
  process.stdin.resume();
  await new Promise((r) => process.stdin.once('end', r));
  stop = true;
  clearInterval(lag);
  const report: ObserverReport = { pollers: await Promise.all(pollers), writes: await writes, maxLagMs };
  process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0));
}

await main();
