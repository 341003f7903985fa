// Boot-storm benchmark of the machine-config server: 1,000 concurrent keep-alive clients fetch a
// ~200 KB rendered config over TLS and over plain HTTP for a few seconds each, and 64 clients over
// TLS with a new connection and a full handshake per request (booting machines keep no
// connection), then the same loads against nginx serving the same bytes as a static file. Prints requests/s, p50/p99 latency and
// the MCS/nginx throughput ratio. The load generator runs in a child process (this file with
// `--load`), so server and clients do not share an event loop; on a small machine they still share
// the CPUs, which hits both servers alike. nginx runs one worker, like the single MCS process.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync, existsSync } from 'node:fs';
import { request as httpRequest, Agent as HttpAgent } from 'node:http';
import { request as httpsRequest, Agent as HttpsAgent } from 'node:https';
import { freePort } from '../src/common/listen.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const CLIENTS = Number(process.env.MCS_BENCH_CLIENTS ?? 1000);
const SECONDS = Number(process.env.MCS_BENCH_SECONDS ?? 5);
/** Clients for the fresh-connection runs: each request is a new TCP connection and a full TLS handshake, as a booting machine's Ignition fetch is. */
const FRESH_CLIENTS = Number(process.env.MCS_BENCH_FRESH_CLIENTS ?? 64);

interface LoadResult { requests: number; errors: number; seconds: number; p50: number; p99: number; bytes: number }

/**
 * Child mode: hammer one URL with concurrent clients, print JSON results. Keep-alive: CLIENTS
 * clients reusing their connections. Fresh: FRESH_CLIENTS clients each opening a new connection
 * per request, with no TLS session cache (a full handshake every time).
 */
async function load(url: string, caPem: string | undefined, fresh: boolean): Promise<void> {
  const u = new URL(url);
  const tls = u.protocol === 'https:';
  const clientCount = fresh ? FRESH_CLIENTS : CLIENTS;
  const agent = tls
    ? new HttpsAgent(fresh ? { keepAlive: false, maxCachedSessions: 0, ca: caPem } : { keepAlive: true, maxSockets: clientCount, ca: caPem })
    : new HttpAgent(fresh ? { keepAlive: false } : { keepAlive: true, maxSockets: clientCount });
  const latencies: number[] = [];
  let errors = 0;
  let bytes = 0;
  let measuring = false;
  let stop = false;
  const one = () => new Promise<void>((resolve) => {
    const t0 = performance.now();
    const req = (tls ? httpsRequest : httpRequest)({ host: u.hostname, port: u.port, path: u.pathname, agent, headers: { accept: 'application/vnd.coreos.ignition+json;version=3.3.0, */*;q=0.1' } }, (res) => {
      let n = 0;
      res.on('data', (c: Buffer) => { n += c.length; });
      res.on('end', () => {
        if (measuring) {
          if (res.statusCode === 200) { latencies.push(performance.now() - t0); bytes += n; } else errors++;
        }
        resolve();
      });
    });
    req.on('error', () => { if (measuring) errors++; resolve(); });
    req.end();
  });
  let warmed = 0;
  const client = async () => { await one(); warmed++; while (!stop) await one(); };
  const clients = Array.from({ length: clientCount }, client);
  // Warm-up: until every client has connected (TCP and TLS handshakes) and fetched once, at most 15 s.
  const warmUntil = performance.now() + 15_000;
  while (warmed < clientCount && performance.now() < warmUntil) await new Promise((r) => setTimeout(r, 50));
  measuring = true;
  const start = performance.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  measuring = false;
  const seconds = (performance.now() - start) / 1000;
  stop = true;
  await Promise.all(clients);
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? NaN;
  const result: LoadResult = { requests: latencies.length, errors, seconds, p50: pct(0.5), p99: pct(0.99), bytes };
  process.stdout.write(JSON.stringify(result));
}

function runLoad(url: string, caFile?: string, fresh = false): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, fresh ? '--load-fresh' : '--load', url, ...(caFile ? [caFile] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c) => { out += c; });
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`load generator exited ${code}`))));
  });
}


function nginxBinary(): string | undefined {
  for (const p of ['/usr/sbin/nginx', '/usr/bin/nginx', '/usr/local/sbin/nginx']) if (existsSync(p)) return p;
  return undefined;
}

async function startNginx(bin: string, dir: string, body: Buffer, cert: string, key: string): Promise<{ http: number; tls: number; proc: ChildProcess }> {
  const [http, tls] = [await freePort(), await freePort()];
  mkdirSync(join(dir, 'www/config'), { recursive: true });
  writeFileSync(join(dir, 'www/config/worker'), body);
  writeFileSync(join(dir, 'tls.crt'), cert);
  writeFileSync(join(dir, 'tls.key'), key);
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, `
${process.getuid?.() === 0 ? 'user root;' : ''}
worker_processes 1;
daemon off;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/tmp-body; proxy_temp_path ${dir}/tmp-proxy; fastcgi_temp_path ${dir}/tmp-fcgi;
  uwsgi_temp_path ${dir}/tmp-uwsgi; scgi_temp_path ${dir}/tmp-scgi;
  sendfile on; tcp_nopush on; keepalive_requests 1000000; keepalive_timeout 60;
  default_type application/json;
  server { listen 127.0.0.1:${http}; root ${dir}/www; }
  server {
    listen 127.0.0.1:${tls} ssl; root ${dir}/www;
    ssl_certificate ${dir}/tls.crt; ssl_certificate_key ${dir}/tls.key; ssl_protocols TLSv1.2 TLSv1.3;
  }
}
`);
  const proc = spawn(bin, ['-c', conf, '-p', dir], { stdio: 'inherit' });
  for (let i = 0; i < 50; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const ok = await new Promise<boolean>((resolve) => {
      httpRequest({ host: '127.0.0.1', port: http, path: '/config/worker' }, (res) => { res.resume(); resolve(res.statusCode === 200); }).on('error', () => resolve(false)).end();
    });
    if (ok) return { http, tls, proc };
  }
  proc.kill();
  throw new Error(`nginx did not start; see ${dir}/error.log`);
}

function fmt(name: string, r: LoadResult): string {
  const rps = r.requests / r.seconds;
  return `${name.padEnd(12)} ${rps.toFixed(0).padStart(7)} req/s  ${(r.bytes / r.seconds / 1e6).toFixed(0).padStart(5)} MB/s  p50 ${r.p50.toFixed(1).padStart(7)} ms  p99 ${r.p99.toFixed(1).padStart(7)} ms  errors ${r.errors}`;
}

async function main(): Promise<void> {
  process.env.BOSUN_LOG_LEVEL ??= 'warn';
  const { MachineConfigServer } = await import('../src/mco/server/server.js');
  const { FileRenderedConfigSource } = await import('../src/mco/server/rendered-config-source.js');
  const { generateCa, issueServingCert } = await import('../src/mco/server/serving-tls.js');
  const { encodeDataUrl } = await import('../src/ignition/data-url.js');

  const dir = mkdtempSync(join(tmpdir(), 'bosun-bench-mcs-'));
  const children: ChildProcess[] = [];
  try {
    // ~200 KB rendered config: 50 files of ~3 KB random data (base64 in data URLs) plus units.
    const files = Array.from({ length: 50 }, (_, i) => ({ path: `/etc/bench/file-${i}`, mode: 420, overwrite: true, contents: { source: encodeDataUrl(randomBytes(2900)) } }));
    const units = Array.from({ length: 20 }, (_, i) => ({ name: `bench-${i}.service`, enabled: true, contents: `[Service]\nExecStart=/bin/true ${'x'.repeat(400)}\n` }));
    mkdirSync(join(dir, 'rendered'));
    writeFileSync(join(dir, 'rendered/worker.json'), JSON.stringify({ kind: 'MachineConfig', metadata: { name: 'rendered-worker-bench' }, spec: { config: { ignition: { version: '3.2.0' }, storage: { files }, systemd: { units } } } }));
    const ca = await generateCa();
    const tls = await issueServingCert(ca, ['localhost', '127.0.0.1']);
    writeFileSync(join(dir, 'ca.crt'), ca.cert);
    const server = new MachineConfigServer({
      source: new FileRenderedConfigSource(join(dir, 'rendered')), tls,
      listenTls: { host: '127.0.0.1', port: 0 }, listenHttp: { host: '127.0.0.1', port: 0 },
      bootstrapKubeconfig: 'apiVersion: v1\nkind: Config\n',
    });
    await server.start();
    // The exact bytes the MCS serves for this Accept header, for nginx to serve as a static file.
    const body = await new Promise<Buffer>((resolve) => {
      httpRequest({ host: '127.0.0.1', port: server.port('http'), path: '/config/worker', headers: { accept: 'application/vnd.coreos.ignition+json;version=3.3.0' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(Buffer.concat(chunks)));
      }).end();
    });
    console.log(`rendered config: ${(body.length / 1024).toFixed(0)} KiB; ${CLIENTS} concurrent keep-alive clients, ${SECONDS} s per run after every client has connected and fetched once`);

    const caFile = join(dir, 'ca.crt');
    const mcsTls = await runLoad(`https://127.0.0.1:${server.port('tls')}/config/worker`, caFile);
    console.log(fmt('mcs tls', mcsTls));
    const mcsHttp = await runLoad(`http://127.0.0.1:${server.port('http')}/config/worker`);
    console.log(fmt('mcs http', mcsHttp));
    const mcsFresh = await runLoad(`https://127.0.0.1:${server.port('tls')}/config/worker`, caFile, true);
    console.log(fmt('mcs tls new', mcsFresh));
    await server.close();

    const bin = nginxBinary();
    if (!bin) {
      console.log('nginx not found: install it to compare (apt-get install nginx)');
      return;
    }
    const nginx = await startNginx(bin, join(dir, 'nginx'), body, tls.cert, tls.key);
    children.push(nginx.proc);
    const ngTls = await runLoad(`https://127.0.0.1:${nginx.tls}/config/worker`, caFile);
    console.log(fmt('nginx tls', ngTls));
    const ngHttp = await runLoad(`http://127.0.0.1:${nginx.http}/config/worker`);
    console.log(fmt('nginx http', ngHttp));
    const ngFresh = await runLoad(`https://127.0.0.1:${nginx.tls}/config/worker`, caFile, true);
    console.log(fmt('nginx tls new', ngFresh));
    const ratio = (a: LoadResult, b: LoadResult) => (a.requests / a.seconds) / (b.requests / b.seconds);
    console.log(`ratio mcs/nginx throughput: tls ${ratio(mcsTls, ngTls).toFixed(2)}, http ${ratio(mcsHttp, ngHttp).toFixed(2)}, tls with a new connection and full handshake per request (${FRESH_CLIENTS} clients) ${ratio(mcsFresh, ngFresh).toFixed(2)} (target ≥ 0.5)`);
  } finally {
    for (const c of children) c.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--load' || process.argv[2] === '--load-fresh') {
  const { readFileSync } = await import('node:fs');
  await load(process.argv[3], process.argv[4] ? readFileSync(process.argv[4], 'utf8') : undefined, process.argv[2] === '--load-fresh');
} else {
  await main();
}
