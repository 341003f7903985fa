// A wire-level fuzz driver for bosun's servers: malformed requests written as raw bytes on `net`
// and `tls` sockets (so that what no HTTP client would send really reaches the server's parser),
// TLS handshakes that go wrong, and slowloris clients, all generated from one seeded PRNG.
//
//   const report = await fuzzServer({ name, target, profile, seed: fuzzSeed(), slow, good, judge });
//   t.diagnostic(report.summary);                      // the seed: FUZZ_SEED=… replays the run
//   assertNoProblems(report);
//
// `fuzzServer` runs rounds of generated requests (a few in parallel), asks `good` (a well-formed
// request, which must succeed) before, between the rounds and at the end, and meanwhile holds
// slow clients open, which the server must close by itself within the bounds of
// src/common/http-limits.ts. Each answer is judged: a connection the server neither answers nor
// closes, a 5xx, or a malformed status line is a problem; `judge` adds the server's own rules (a
// Kubernetes Status for the API server, say). At the end the server must hold no socket of a
// connection the run opened (nor, for a proxy, one to its upstream), and the heap must not have
// grown by more than a leak would. Everything it opens it closes; it binds only a passing loopback
// listener, to capture a real ClientHello.
import { connect as netConnect, createServer, type AddressInfo, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import assert from 'node:assert/strict';
import { HANDSHAKE_TIMEOUT_MS, HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS } from '../../src/common/http-limits.js';
import { prng } from './prng.js';

export type Random = () => number;

/** The run's seed: FUZZ_SEED when set, else a fresh one. Print it (the report's summary does). */
export function fuzzSeed(): number {
  const given = process.env.FUZZ_SEED;
  if (given === undefined || given === '') return Math.floor(Math.random() * 2 ** 31);
  const seed = Number(given);
  if (!Number.isSafeInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got "${given}"`);
  return seed;
}

export interface Target {
  host: string;
  port: number;
  /** The bytes go inside a TLS session (the certificate is not checked: the bytes are under test, not the peer). */
  tls?: boolean;
}

// ---------------------------------------------------------------------------------------------
// One exchange on a raw socket.

export interface Sent {
  /** What is written, in one go. */
  bytes: Buffer;
  /** A whole request the server can answer without more bytes; otherwise it may wait for them. */
  complete: boolean;
  /** A HEAD request: its answer has no body. */
  head?: boolean;
}

export interface Outcome {
  /** answered: a status line came back; closed: the server closed or reset without one; kept: neither, even after the client's FIN. */
  kind: 'answered' | 'closed' | 'kept';
  status?: number;
  statusLine?: string;
  headers: Record<string, string>;
  body: Buffer;
  /** The server waited for more bytes: the client had to half-close before anything happened. */
  afterFin: boolean;
  /** The TLS handshake failed (it should not, for a well-formed client). */
  tlsError?: string;
  ms: number;
}

export interface ExchangeTimes {
  /** How long a request may go unanswered before the client half-closes. */
  answerMs?: number;
  /** How long after the client's FIN the server may keep the connection open. */
  closeMs?: number;
}

/**
 * The local ports of the connections the driver opened, so that at the end of a run it can tell
 * whether a server still holds a socket for any of them (see `serverHolds`).
 */
const opened = new Set<number>();

/** A TCP connection to the target, its local port noted. */
function tcp(target: Target, options: { allowHalfOpen?: boolean } = {}): Socket {
  const socket = netConnect({ host: target.host, port: target.port, ...options });
  socket.once('connect', () => opened.add(socket.localPort!));
  return socket;
}

/** Opens a socket to the target (TLS handshake done, or failed). */
function open(target: Target, options: { allowHalfOpen?: boolean } = {}): Promise<{ socket: Socket; raw: Socket; tlsError?: string }> {
  return new Promise((resolve) => {
    const raw = tcp(target, options);
    if (!target.tls) {
      raw.once('connect', () => resolve({ socket: raw, raw }));
      raw.once('error', (e) => resolve({ socket: raw, raw, tlsError: `connect: ${e.message}` }));
      return;
    }
    raw.on('error', () => undefined);
    const socket = tlsConnect({ socket: raw, rejectUnauthorized: false, servername: 'localhost', ALPNProtocols: ['http/1.1'], ...options });
    socket.once('secureConnect', () => resolve({ socket, raw }));
    socket.once('error', (e) => resolve({ socket, raw, tlsError: e.message }));
  });
}

interface Parsed {
  statusLine: string;
  status?: number;
  headers: Record<string, string>;
  body: Buffer;
  /** The whole answer is in (by its Content-Length or chunked framing). */
  done: boolean;
}

/** The first HTTP/1.x response in `data`, as far as it has arrived. */
export function parseResponse(data: Buffer, head: boolean): Parsed | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const lines = data.subarray(0, end).toString('latin1').split('\r\n');
  const statusLine = lines[0];
  const m = /^HTTP\/1\.[01] ([1-5]\d\d)(?: .*)?$/.exec(statusLine);
  // An interim answer (100 Continue) is followed by the real one.
  if (m && m[1].startsWith('1') && m[1] !== '101') return parseResponse(data.subarray(end + 4), head);
  const headers: Record<string, string> = {};
  for (const line of lines.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  const rest = data.subarray(end + 4);
  const status = m ? Number(m[1]) : undefined;
  if (head || status === 204 || status === 304 || status === 101) return { statusLine, status, headers, body: Buffer.alloc(0), done: true };
  if (headers['content-length'] !== undefined) {
    const length = Number(headers['content-length']);
    return { statusLine, status, headers, body: rest.subarray(0, length), done: rest.length >= length };
  }
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const chunks: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = rest.indexOf('\r\n', at);
      if (eol < 0) break;
      const size = parseInt(rest.subarray(at, eol).toString('latin1'), 16);
      if (!Number.isFinite(size)) break;
      if (size === 0) return { statusLine, status, headers, body: Buffer.concat(chunks), done: true };
      if (rest.length < eol + 2 + size + 2) break;
      chunks.push(rest.subarray(eol + 2, eol + 2 + size));
      at = eol + 2 + size + 2;
    }
    return { statusLine, status, headers, body: Buffer.concat(chunks), done: false };
  }
  // Neither: the body lasts until the server closes.
  return { statusLine, status, headers, body: rest, done: false };
}

/**
 * Writes `sent` and waits for the first answer. When none comes within `answerMs` (the server
 * waits for more bytes), the client half-closes, and the server must then answer or close within
 * `closeMs`; a streamed answer (a watch) counts once its head is in.
 */
export async function exchange(target: Target, sent: Sent, times: ExchangeTimes = {}): Promise<Outcome> {
  const { answerMs = 8_000, closeMs = 8_000 } = times;
  const started = Date.now();
  const { socket, tlsError } = await open(target);
  if (tlsError) {
    socket.destroy();
    return { kind: 'closed', headers: {}, body: Buffer.alloc(0), afterFin: false, tlsError, ms: Date.now() - started };
  }
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let afterFin = false;
    let settled = false;
    let timer: NodeJS.Timeout;
    let bodyTimer: NodeJS.Timeout | undefined;
    const finish = (kind: Outcome['kind']) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(bodyTimer);
      socket.destroy();
      const parsed = parseResponse(Buffer.concat(chunks), sent.head ?? false);
      resolve({
        kind: parsed ? 'answered' : kind, status: parsed?.status, statusLine: parsed?.statusLine,
        headers: parsed?.headers ?? {}, body: parsed?.body ?? Buffer.alloc(0), afterFin, ms: Date.now() - started,
      });
    };
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      const parsed = parseResponse(Buffer.concat(chunks), sent.head ?? false);
      if (parsed?.done) finish('answered');
      // A head without a complete body yet: a streamed answer gets a moment for its body, no more.
      else if (parsed && !bodyTimer) bodyTimer = setTimeout(() => finish('answered'), 2_000);
    });
    socket.on('error', () => finish('closed'));
    socket.on('close', () => finish('closed'));
    timer = setTimeout(() => {
      afterFin = true;
      socket.end();
      timer = setTimeout(() => finish('kept'), closeMs);
    }, answerMs);
    socket.write(sent.bytes, () => undefined);
  });
}

// ---------------------------------------------------------------------------------------------
// Generated requests.

export interface HttpProfile {
  /** Paths the server serves (with queries, where it takes some): the seeds of the bad ones. */
  paths: string[];
  /** Methods it serves. */
  methods: string[];
  /** Headers a good request carries (a bearer token), sent on most fuzzed ones too, so that they reach the handlers. */
  headers?: Record<string, string>;
  /** Objects of the kinds it reads: sent with values of the wrong type, nested too deep or too big. */
  bodies?: Record<string, unknown>[];
  /** Its request body limit in bytes: bodies just over it are sent too. */
  bodyLimit?: number;
}

export interface FuzzCase extends Sent {
  /** What the case is, for the report. */
  what: string;
}

const CRLF = '\r\n';

function tools(random: Random) {
  const int = (n: number) => Math.floor(random() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const chance = (p: number) => random() < p;
  const bytes = (n: number) => Buffer.from(Array.from({ length: n }, () => int(256)));
  return { int, pick, chance, bytes };
}

/** A random value of some type, for a field that wants another. */
function wrongValue(random: Random): unknown {
  const { pick, int } = tools(random);
  return pick([() => -1, () => 1e308, () => 2 ** 53 + 1, () => 'x'.repeat(1 + int(5000)), () => '', () => true, () => null,
    () => [], () => [1, 'a', null], () => ({}), () => ({ a: { b: [] } }), () => '\u0000\u202e', () => '../../etc/passwd', () => -0.5])();
}

/** The object with one value somewhere replaced by one of the wrong type. */
function mistype(random: Random, object: Record<string, unknown>): Record<string, unknown> {
  const { int, pick } = tools(random);
  const copy = structuredClone(object);
  let cursor: Record<string, unknown> = copy;
  for (let steps = int(4); steps >= 0; steps--) {
    const keys = Object.keys(cursor);
    if (keys.length === 0) break;
    const key = pick(keys);
    const next = cursor[key];
    if (steps === 0 || next === null || typeof next !== 'object') {
      cursor[key] = wrongValue(random);
      break;
    }
    cursor = next as Record<string, unknown>;
  }
  return copy;
}

/** A mutation of a served path: bad encodings, traversal, absolute forms, huge, control bytes. */
function badPath(random: Random, path: string): string {
  const { pick, int } = tools(random);
  const [p, q = ''] = path.split('?');
  const segments = p.split('/');
  const at = 1 + int(Math.max(1, segments.length - 1));
  const put = (s: string) => [...segments.slice(0, at), s, ...segments.slice(at + 1)].join('/') + (q ? `?${q}` : '');
  return pick([
    () => put('%'), () => put('%zz'), () => put('%00'), () => put('%ff%fe'), () => put('..'), () => put('%2e%2e'), () => put('.'),
    () => put('a%2Fb'), () => put('x'.repeat(300 + int(9000))), () => put('\u00e9\u4e2d'), () => put('a;b=c'), () => put('a\\b'),
    () => `${p}//`, () => `//${p}`, () => `/../../../../etc/passwd`, () => `${p}?${'a=1&'.repeat(1 + int(2000))}`,
    () => `${p}?%zz=1&a=%`, () => `${p}?a[]=1&a[b]=2&a=3&a=4`, () => `${p}#frag`, () => '*', () => '', () => p.slice(1),
    () => `http://example.com${path}`, () => 'http://[', () => 'http://', () => `https://user:pass@127.0.0.1:1${path}`,
    () => `${p}?${'x'.repeat(20_000)}`, () => `${p}/${'a/'.repeat(2000)}`, () => `${p}?q=${'%'.repeat(50)}`,
  ])();
}

const GARBAGE_METHODS = ['FOO', 'get', 'G E T', 'CONNECT', 'PRI', 'TRACE', 'PROPFIND', 'M-SEARCH', 'X'.repeat(300), '', '\u0000GET', 'GET\t', 'ÄÖÜ', 'SOURCE', 'PURGE', 'OPTIONS'];
const BAD_VERSIONS = ['HTTP/1.2', 'HTTP/2.0', 'HTTP/9.9', 'HTTP/1', 'http/1.1', 'HTTP/1.1 extra', 'HTTP/01.1', 'HTPT/1.1', '', 'HTTP/1.1\u0000'];

/**
 * One generated request: bad request lines, headers and framings, bodies that do not decode,
 * nest too deep, weigh too much or carry wrong types, pipelines, and plain garbage.
 */
export function httpCase(random: Random, profile: HttpProfile, host: string): FuzzCase {
  const { int, pick, chance, bytes } = tools(random);
  const method = pick(profile.methods);
  const path = pick(profile.paths);
  const auth = chance(0.8) ? Object.entries(profile.headers ?? {}).map(([k, v]) => `${k}: ${v}`) : [];
  const line = (m: string, p: string, v = 'HTTP/1.1') => `${m} ${p} ${v}`;
  const request = (first: string, headers: string[], body: Buffer = Buffer.alloc(0), eol = CRLF) =>
    Buffer.concat([Buffer.from([first, ...headers].join(eol) + eol + eol, 'latin1'), body]);
  const base = (extra: string[] = []) => [`Host: ${host}`, ...auth, ...extra];
  const jsonBody = (b: Buffer, type = 'application/json') => [`Content-Type: ${type}`, `Content-Length: ${b.length}`];
  const nest = (n: number) => pick([() => `${'['.repeat(n)}${']'.repeat(n)}`, () => `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`])();
  const bodyMethod = pick(['POST', 'PUT', 'PATCH', ...profile.methods.filter((m) => m !== 'GET' && m !== 'HEAD')]);

  const families: (() => FuzzCase)[] = [
    // The request line.
    () => {
      const m = pick(GARBAGE_METHODS);
      return { what: `method ${JSON.stringify(m.slice(0, 20))}`, bytes: request(line(m, path), base()), complete: true };
    },
    () => {
      const p = badPath(random, path);
      return { what: `path ${JSON.stringify(p.slice(0, 60))}`, bytes: request(line(method, p), base()), complete: true, head: method === 'HEAD' };
    },
    () => {
      const v = pick(BAD_VERSIONS);
      return { what: `version ${JSON.stringify(v)}`, bytes: request(line(method, path, v), base()), complete: false, head: method === 'HEAD' };
    },
    () => ({ what: 'request line without a version', bytes: Buffer.from(`${method} ${path}${CRLF}${CRLF}`), complete: false, head: method === 'HEAD' }),
    () => ({ what: 'HTTP/1.0 without Host', bytes: request(line(method, path, 'HTTP/1.0'), auth), complete: true, head: method === 'HEAD' }),
    () => ({ what: 'HTTP/1.1 without Host', bytes: request(line(method, path), auth), complete: true, head: method === 'HEAD' }),
    () => ({ what: 'bare LF line ends', bytes: request(line(method, path), base(), Buffer.alloc(0), '\n'), complete: false, head: method === 'HEAD' }),
    // Headers.
    () => {
      const size = pick([17_000, 70_000, 1_000_000]);
      return { what: `a ${size}-byte header`, bytes: request(line(method, path), base([`X-Big: ${'a'.repeat(size)}`])), complete: true, head: method === 'HEAD' };
    },
    () => {
      const n = pick([200, 3000]);
      return { what: `${n} headers`, bytes: request(line(method, path), base(Array.from({ length: n }, (_, i) => `X-H${i}: ${i}`))), complete: true, head: method === 'HEAD' };
    },
    () => {
      const h = pick(['Bad Name: x', 'X-A\u0000: x', ': empty-name', 'X-\u00e9: x', 'X-A : space-before-colon', 'no-colon-at-all', 'X-Ctl: a\u0001b', 'X-Cr: a\rb', 'X-Del: \u007f', '(x): y', ' leading-space: x']);
      return { what: `header ${JSON.stringify(h)}`, bytes: request(line(method, path), base([h])), complete: true, head: method === 'HEAD' };
    },
    () => ({ what: 'obs-fold continuation', bytes: request(line(method, path), base(['X-Fold: a', ' b', '\tc'])), complete: true, head: method === 'HEAD' }),
    () => {
      const dup = pick([[`Host: ${host}`, 'Host: evil.example'], ['Authorization: Bearer a', 'Authorization: Bearer b'], ['Content-Type: application/json', 'Content-Type: text/plain'], ['Accept: */*', 'Accept: text/html'], ['Connection: close', 'Connection: keep-alive']]);
      return { what: `duplicated ${dup[0].split(':')[0]}`, bytes: request(line(method, path), [...base(), ...dup]), complete: true, head: method === 'HEAD' };
    },
    () => {
      const h = pick([`Authorization: Bearer ${'x'.repeat(8000)}`, 'Authorization: Basic !!!', 'Authorization: Bearer', 'Authorization: bearer \u00e9', 'Authorization:  Bearer  a b c',
        'Accept: application/json;q=abc, */*;q=-1', `Accept: ${'a/b, '.repeat(2000)}`, 'Accept: \u0000', 'Accept-Encoding: gzip;q=2, br, zstd, *',
        'Expect: 100-continue', 'Expect: bogus', 'Upgrade: websocket\r\nConnection: Upgrade', 'Upgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAAQAAP__',
        'Range: bytes=0-1,5-4,-9999999999999999999', 'If-None-Match: "x"', 'X-Forwarded-For: 1.2.3.4, \u0000', 'Cookie: a=b; a=c; ' + 'x=y; '.repeat(500)]);
      return { what: `header ${JSON.stringify(h.slice(0, 40))}`, bytes: request(line(method, path), base([h])), complete: !h.startsWith('Expect: 100'), head: method === 'HEAD' };
    },
    // Framing.
    () => ({ what: 'Content-Length with Transfer-Encoding', bytes: request(line(bodyMethod, path), base(['Content-Length: 4', 'Transfer-Encoding: chunked']), Buffer.from('0\r\n\r\n')), complete: true }),
    () => {
      const cl = pick(['-1', 'abc', '1e3', '0x10', ' 5', '5 5', '99999999999999999999', '+5', '', '5,6']);
      return { what: `Content-Length ${JSON.stringify(cl)}`, bytes: request(line(bodyMethod, path), base([`Content-Length: ${cl}`]), Buffer.from('{}')), complete: false };
    },
    () => ({ what: 'two different Content-Lengths', bytes: request(line(bodyMethod, path), base(['Content-Length: 2', 'Content-Length: 3']), Buffer.from('{}x')), complete: true }),
    () => {
      const te = pick(['gzip', 'chunked, gzip', 'chunked\u000b', 'xchunked', 'chunked, chunked', 'identity', 'CHUNKED ']);
      return { what: `Transfer-Encoding ${JSON.stringify(te)}`, bytes: request(line(bodyMethod, path), base([`Transfer-Encoding: ${te}`]), Buffer.from('2\r\n{}\r\n0\r\n\r\n')), complete: false };
    },
    () => {
      const body = pick(['zz\r\n{}\r\n0\r\n\r\n', '-2\r\n{}\r\n0\r\n\r\n', 'ffffffffffffffffff\r\n{}\r\n', '2;ext=' + 'e'.repeat(10_000) + '\r\n{}\r\n0\r\n\r\n', '2\r\n{}0\r\n\r\n', '2\r\n{}\r\n0\r\nTrailer: x\r\nBad Trailer\r\n\r\n', '2\n{}\n0\n\n']);
      return { what: `chunked body ${JSON.stringify(body.slice(0, 20))}`, bytes: request(line(bodyMethod, path), base(['Transfer-Encoding: chunked', 'Content-Type: application/json']), Buffer.from(body)), complete: false };
    },
    () => ({ what: 'chunked body without its last chunk', bytes: request(line(bodyMethod, path), base(['Transfer-Encoding: chunked']), Buffer.from('2\r\n{}\r\n')), complete: false }),
    () => ({ what: 'Content-Length longer than the body', bytes: request(line(bodyMethod, path), base(['Content-Length: 100', 'Content-Type: application/json']), Buffer.from('{}')), complete: false }),
    () => ({ what: 'Content-Length shorter than the body (smuggled request)', bytes: request(line(bodyMethod, path), base(['Content-Length: 2', 'Content-Type: application/json']), Buffer.from(`{}GET /admin HTTP/1.1${CRLF}Host: x${CRLF}${CRLF}`)), complete: true }),
    // Bodies.
    () => {
      const b = Buffer.from(pick(['{', '{"a":}', 'not json', '[1,2', '\u0000\u0001', '{"a":1}}', 'null', '"str"', '1e999999', '{"__proto__":{"polluted":1}}', '\ufeff{}', '{"a":"\ud800"}']));
      return { what: `body ${JSON.stringify(b.toString().slice(0, 20))}`, bytes: request(line(bodyMethod, path), base(jsonBody(b)), b), complete: true };
    },
    () => {
      const b = Buffer.from(nest(pick([1000, 100_000, 500_000])));
      return { what: `a body nested ${b.length} bytes deep`, bytes: request(line(bodyMethod, path), base(jsonBody(b, pick(['application/json', 'application/yaml', 'application/merge-patch+json']))), b), complete: true };
    },
    () => {
      const limit = profile.bodyLimit ?? 1024 * 1024;
      const b = Buffer.alloc(pick([limit + 1, limit * 2, 4 * 1024 * 1024]), 0x20);
      return { what: `a ${b.length}-byte body`, bytes: request(line(bodyMethod, path), base(jsonBody(b)), b), complete: true };
    },
    () => {
      const limit = profile.bodyLimit ?? 1024 * 1024;
      return { what: `a declared ${limit * 10}-byte body, 10 bytes sent`, bytes: request(line(bodyMethod, path), base(jsonBody(Buffer.alloc(0)).slice(0, 1).concat(`Content-Length: ${limit * 10}`)), Buffer.from('{"a":1234}')), complete: false };
    },
    () => {
      const objects = profile.bodies ?? [{ a: 1 }];
      const object = mistype(random, pick(objects));
      const b = Buffer.from(JSON.stringify(object));
      return { what: `wrongly typed ${JSON.stringify(object).slice(0, 60)}`, bytes: request(line(bodyMethod, path), base(jsonBody(b)), b), complete: true };
    },
    () => {
      const b = bytes(1 + int(2000));
      return { what: 'binary body', bytes: request(line(bodyMethod, path), base(jsonBody(b, pick(['application/json', 'application/octet-stream', 'application/vnd.kubernetes.protobuf', 'text/plain; charset=utf-16']))), b), complete: true };
    },
    () => {
      const object = pick(profile.bodies ?? [{ a: 1 }]);
      const b = Buffer.from(JSON.stringify(object));
      return { what: 'a body with the wrong Content-Type', bytes: request(line(bodyMethod, path), base(jsonBody(b, pick(['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'garbage', '', 'application/json; charset=ebcdic']))), b), complete: true };
    },
    // Pipelines and garbage.
    () => {
      const n = 2 + int(40);
      const one = request(line('GET', pick(profile.paths)), base());
      return { what: `${n} pipelined requests and a broken one`, bytes: Buffer.concat([...Array.from({ length: n }, () => one), Buffer.from(`GARBAGE\u0000${CRLF}${CRLF}`)]), complete: true };
    },
    () => ({ what: 'random bytes', bytes: bytes(1 + int(4000)), complete: false }),
    () => ({ what: 'random bytes ending a head', bytes: Buffer.concat([bytes(1 + int(300)), Buffer.from(`${CRLF}${CRLF}`)]), complete: false }),
    () => ({ what: 'a TLS ClientHello where HTTP is spoken', bytes: Buffer.from('160301020001', 'hex'), complete: false }),
  ];
  return pick(families)();
}

// ---------------------------------------------------------------------------------------------
// TLS handshakes that go wrong.

let clientHello: Promise<Buffer> | undefined;

/** The bytes of a real ClientHello: Node's own, sent to a plain TCP listener of ours that takes it and closes. */
export function realClientHello(): Promise<Buffer> {
  clientHello ??= new Promise((resolve, reject) => {
    const server = createServer((s) => {
      s.once('data', (d: Buffer) => {
        resolve(d);
        s.destroy();
        server.close();
      });
    });
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const c = tlsConnect({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, rejectUnauthorized: false, servername: 'localhost', ALPNProtocols: ['http/1.1'] });
      c.on('error', () => undefined);
      c.on('close', () => c.destroy());
    });
  });
  return clientHello;
}

export interface TlsCase {
  what: string;
  /** Raw bytes written before the handshake; undefined: a real handshake is made (see `then`). */
  bytes?: Buffer;
  /** After a real handshake: end the client's side (the server must close its own), or reset. */
  then?: 'close' | 'reset';
  /** A client that offers what the server should refuse. */
  client?: { minVersion?: 'TLSv1' | 'TLSv1.1'; maxVersion?: 'TLSv1' | 'TLSv1.1'; ALPNProtocols?: string[]; servername?: string; ciphers?: string };
  /** Abort the TCP connection (RST) right after writing. */
  reset?: boolean;
}

/** Generated handshake faults: plaintext to a TLS port, garbage, mutated and truncated hellos, abrupt closes, refused versions. */
export function tlsCase(random: Random, hello: Buffer, host: string): TlsCase {
  const { int, pick, bytes } = tools(random);
  const flip = () => {
    const copy = Buffer.from(hello);
    for (let i = 1 + int(8); i > 0; i--) copy[int(copy.length)] = int(256);
    return copy;
  };
  return pick<() => TlsCase>([
    () => ({ what: 'plaintext HTTP to the TLS port', bytes: Buffer.from(`GET / HTTP/1.1\r\nHost: ${host}\r\n\r\n`) }),
    () => ({ what: 'garbage instead of a ClientHello', bytes: bytes(1 + int(3000)) }),
    () => ({ what: 'a ClientHello with flipped bytes', bytes: flip() }),
    () => ({ what: 'a truncated ClientHello, then close', bytes: hello.subarray(0, 1 + int(hello.length - 1)) }),
    () => ({ what: 'a ClientHello, then reset', bytes: hello, reset: true }),
    () => ({ what: 'a record claiming 16 KiB, then close', bytes: Buffer.concat([Buffer.from('1603010400', 'hex'), bytes(20)]) }),
    () => ({ what: 'an SSLv2-style hello', bytes: Buffer.from('802b0103010012000000100100800700c0030080060040020080040080', 'hex') }),
    () => ({ what: 'a ClientHello twice', bytes: Buffer.concat([hello, hello]) }),
    () => ({ what: 'a TLS alert first', bytes: Buffer.from('15030100020228', 'hex') }),
    () => ({ what: 'a handshake, then close', then: 'close' }),
    () => ({ what: 'a handshake, then reset', then: 'reset' }),
    () => ({ what: 'TLS 1.0 only', client: { minVersion: 'TLSv1', maxVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' } }),
    () => ({ what: 'ALPN h2 only', client: { ALPNProtocols: ['h2'] } }),
    () => ({ what: 'an odd server name', client: { servername: pick(['x'.repeat(250), 'a..b', 'xn--', '127.0.0.1.example']) } }),
  ])();
}

/**
 * Runs one handshake case; resolves with what the server did: closed the connection (as it
 * should, for every fault), or kept it open past `closeMs`.
 */
export function tlsExchange(target: Target, c: TlsCase, closeMs = 8_000): Promise<'closed' | 'kept' | 'handshake'> {
  return new Promise((resolve) => {
    let done = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (socket: Socket, what: 'closed' | 'kept' | 'handshake') => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(what);
    };
    if (c.bytes) {
      const socket = tcp(target);
      socket.on('error', () => finish(socket, 'closed'));
      socket.on('close', () => finish(socket, 'closed'));
      socket.on('data', () => undefined);
      socket.once('connect', () => {
        socket.write(c.bytes!, () => {
          if (c.reset) socket.resetAndDestroy();
        });
        // Not every fault can be told apart from a slow client: after a while the client ends
        // its side, and the server must then close.
        timer = setTimeout(() => {
          socket.end();
          timer = setTimeout(() => finish(socket, 'kept'), closeMs);
        }, 1_000);
      });
      return;
    }
    // Over a TCP socket of our own, which can be reset (a TLS socket cannot).
    const raw = tcp(target);
    raw.on('error', () => undefined);
    const socket = tlsConnect({ socket: raw, rejectUnauthorized: false, servername: 'localhost', ...c.client });
    socket.on('error', () => finish(socket, 'closed'));
    socket.on('close', () => finish(socket, 'closed'));
    socket.once('secureConnect', () => {
      if (c.client) return finish(socket, 'handshake');
      if (c.then === 'reset') {
        // Only the TCP socket: destroying a TLS socket whose TCP socket was reset crashes Node 20
        // (SIGSEGV, in the client), so this one is left to the collector.
        done = true;
        clearTimeout(timer);
        raw.resetAndDestroy();
        return resolve('closed');
      }
      // 'close': the client ends its side; the server must close its own.
      socket.end();
    });
    timer = setTimeout(() => finish(socket, 'kept'), closeMs);
  });
}

// ---------------------------------------------------------------------------------------------
// Slow clients.

export interface SlowClient {
  what: SlowKind;
  /** Set when the server closed the connection, this long after it opened. */
  closedAfterMs?: number;
  /** What the server said before closing (a 408, say). */
  said: string;
  stop(): void;
}

export type SlowKind = 'silent' | 'headers' | 'request-line' | 'body' | 'held-after-error' | 'tls-silent' | 'tls-partial-hello';

/** How much later than its bound a server may close a slow client on a loaded machine. */
const SLOW_SLACK_MS = 20_000;

/** How long the server may keep a slow client of this kind: the bound of common/http-limits.ts it runs into, and some slack. */
export function slowBoundMs(kind: SlowKind): number {
  switch (kind) {
    case 'body':
      return REQUEST_TIMEOUT_MS + SLOW_SLACK_MS;
    case 'tls-silent':
    case 'tls-partial-hello':
      return HANDSHAKE_TIMEOUT_MS + SLOW_SLACK_MS;
    case 'held-after-error':
      return SLOW_SLACK_MS;
    default:
      return HEADERS_TIMEOUT_MS + SLOW_SLACK_MS;
  }
}

/**
 * A slowloris client: it opens a connection and then trickles bytes (or nothing) without ever
 * completing the request — headers a line per interval, the request line a byte per interval, a
 * declared body a few bytes per interval, or (TLS) nothing or half a ClientHello — or it sends a
 * request the server refuses and then never closes its side ('held-after-error'). Reports when
 * the server closed the connection (for 'held-after-error': when the server no longer holds its
 * socket, as /proc/net/tcp shows); `stop()` closes it from the client's side.
 */
export async function slowClient(target: Target, kind: SlowKind, host: string, intervalMs = 1_000): Promise<SlowClient> {
  const steps: Buffer[] = [];
  switch (kind) {
    case 'silent':
    case 'tls-silent':
      break;
    case 'tls-partial-hello': {
      const hello = await realClientHello();
      steps.push(hello.subarray(0, 20), ...Array.from({ length: 100 }, (_, i) => hello.subarray(20 + i, 21 + i)));
      break;
    }
    case 'headers':
      steps.push(Buffer.from(`GET / HTTP/1.1\r\nHost: ${host}\r\n`), ...Array.from({ length: 600 }, (_, i) => Buffer.from(`X-Slow-${i}: ${i}\r\n`)));
      break;
    case 'request-line':
      steps.push(...[...'GET /'.repeat(200)].map((ch) => Buffer.from(ch)));
      break;
    case 'body':
      steps.push(Buffer.from(`POST / HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{`), ...Array.from({ length: 600 }, () => Buffer.from('"a":1,')));
      break;
    case 'held-after-error':
      steps.push(Buffer.from(`GET / HTTP/1.1\r\nHost: ${host}\r\nBad Header\r\n\r\n`));
      break;
  }
  const started = Date.now();
  const held = kind === 'held-after-error';
  const { socket, raw, tlsError } = await open(kind.startsWith('tls-') ? { ...target, tls: false } : target, { allowHalfOpen: held });
  if (tlsError) throw new Error(`a slow client (${kind}) could not connect: ${tlsError}`);
  const client: SlowClient = { what: kind, said: '', stop: () => socket.destroy() };
  let i = 0;
  let answered = false;
  const step = () => {
    if (i < steps.length && !socket.destroyed) socket.write(steps[i++]);
    // The client keeps its side open whatever the server does: once the server has answered or
    // ended (before that, an unaccepted connection has no owner either), it must let the socket go.
    if (held && answered && !serverHolds(target, [raw.localPort!])) closed();
  };
  const timer = setInterval(step, held ? 250 : intervalMs);
  const closed = () => {
    clearInterval(timer);
    client.closedAfterMs ??= Date.now() - started;
  };
  socket.on('data', (d: Buffer) => {
    answered = true;
    client.said += d.toString('latin1').slice(0, 200);
  });
  socket.on('end', () => (answered = true));
  socket.on('error', () => undefined);
  socket.on('close', closed);
  step();
  return client;
}

// ---------------------------------------------------------------------------------------------
// The run.

/** Bytes of heap in use after a full collection (the collector is exposed for this). */
export function heapAfterGc(): number {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** The rows of /proc/net/tcp as [local address, remote address, state, inode], addresses as the table writes them (AABBCCDD:PORT). */
function tcpTable(): string[][] {
  try {
    return readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1).map((row) => row.trim().split(/\s+/)).filter((c) => c.length > 9).map((c) => [c[1], c[2], c[3], c[9]]);
  } catch {
    return []; // not Linux: nothing to count
  }
}

const hexPort = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
const hexAddress = (target: Target) => `${target.host.split('.').map((o) => Number(o).toString(16).padStart(2, '0')).reverse().join('').toUpperCase()}:${hexPort(target.port)}`;
/** Held by a process (an inode), and neither listening nor in TIME_WAIT. */
const held = (state: string, inode: string) => state !== '0A' && state !== '06' && inode !== '0';

/** Connections this machine's processes hold open to the target (a proxy's to its upstream, say). */
export function connectionsTo(target: Target): number {
  const remote = hexAddress(target);
  return tcpTable().filter(([, r, state, inode]) => r === remote && held(state, inode)).length;
}

/**
 * The sockets the server at the target still holds (its process has them open: an inode in
 * /proc/net/tcp, in any state but LISTEN and TIME_WAIT) for connections from the given local
 * ports of this machine.
 */
export function serverHolds(target: Target, clientPorts: Iterable<number>): number {
  const local = hexAddress(target);
  const remotes = new Set([...clientPorts].map(hexPort));
  return tcpTable().filter(([l, r, state, inode]) => l === local && remotes.has(r.split(':')[1]) && held(state, inode)).length;
}

export interface FuzzOptions {
  /** What the report calls the server. */
  name: string;
  target: Target;
  profile: HttpProfile;
  seed: number;
  /** Generated requests in all (default 400), in `rounds` rounds (default 4), `parallel` at a time (default 6). */
  requests?: number;
  rounds?: number;
  parallel?: number;
  /** Handshake cases in all (TLS targets; default 60). */
  handshakes?: number;
  /** Slow clients held open through the run; each must be closed within its bound (`slowBoundMs`). */
  slow?: SlowKind[];
  /** A server the target passes requests on to: the connections to it must be closed by the end too. */
  upstream?: Target;
  /** A well-formed request: throws unless it succeeds. Asked before, between the rounds and at the end. */
  good: () => Promise<void>;
  /** The server's own rules for an answer: a problem, or undefined. */
  judge?: (c: FuzzCase, o: Outcome) => string | undefined;
  /** Statuses ≥ 500 that are the right answer here (a 503 from a proxy with nothing behind it, say). */
  allow5xx?: number[];
  times?: ExchangeTimes;
}

export interface FuzzReport {
  seed: number;
  problems: string[];
  /** Outcomes by kind and status ("answered 400": 12, "closed": 3, …). */
  counts: Record<string, number>;
  /** When each slow client was closed (ms), by kind. */
  slowClosedMs: Record<string, number[]>;
  heapGrowthBytes: number;
  summary: string;
}

/** How much the heap (servers and driver alike, after a full collection) may grow over a run: what a leak per request would pass. */
const MAX_HEAP_GROWTH_BYTES = 64 * 2 ** 20;

/** The default judgement: every answer well-formed, no 5xx, nothing kept open after the client's FIN. */
function judgeOutcome(c: FuzzCase, o: Outcome, allow5xx: number[]): string | undefined {
  if (o.tlsError) return `the TLS handshake failed: ${o.tlsError}`;
  if (o.kind === 'kept') return 'the server kept the connection open without answering, even after the client closed its side';
  if (o.kind === 'answered' && o.status === undefined) return `malformed status line ${JSON.stringify(o.statusLine?.slice(0, 80))}`;
  if (o.status !== undefined && o.status >= 500 && !allow5xx.includes(o.status)) return `answered ${o.status}: ${o.body.toString('utf8').slice(0, 200)}`;
  if (c.complete && o.afterFin && o.kind === 'answered' && o.status !== 408) return `answered only after the client's FIN (${o.status})`;
  return undefined;
}

/** Runs the fuzz rounds against one server; see the header. */
export async function fuzzServer(o: FuzzOptions): Promise<FuzzReport> {
  const random = prng(o.seed);
  const { requests = 400, rounds = 4, parallel = 6, handshakes = 60 } = o;
  const problems: string[] = [];
  const counts: Record<string, number> = {};
  const count = (k: string) => (counts[k] = (counts[k] ?? 0) + 1);
  const host = `${o.target.host}:${o.target.port}`;
  const checkGood = async (when: string) => {
    try {
      await o.good();
    } catch (e) {
      problems.push(`a good request ${when} failed: ${(e as Error).message}`);
    }
  };

  await checkGood('before the run');
  const heapBefore = heapAfterGc();
  const slow = await Promise.all((o.slow ?? []).map((k) => slowClient(o.target, k, host)));
  const slowStarted = Date.now();

  // Cases are generated up front, in order, so that the seed alone decides them.
  const cases = Array.from({ length: requests }, () => httpCase(random, o.profile, host));
  const hello = o.target.tls ? await realClientHello() : Buffer.alloc(0);
  const tlsCases = o.target.tls ? Array.from({ length: handshakes }, () => tlsCase(random, hello, host)) : [];
  const perRound = Math.ceil(requests / rounds);
  const tlsPerRound = Math.ceil(tlsCases.length / rounds);
  for (let round = 0; round < rounds; round++) {
    const batch: (() => Promise<void>)[] = [
      ...cases.slice(round * perRound, (round + 1) * perRound).map((c, i) => async () => {
        // A request the server may rightly wait on is ended by the client sooner.
        const outcome = await exchange(o.target, c, { ...o.times, answerMs: c.complete ? o.times?.answerMs : 1_000 });
        count(outcome.status !== undefined ? `answered ${outcome.status}` : outcome.kind);
        const problem = judgeOutcome(c, outcome, o.allow5xx ?? []) ?? (outcome.kind === 'answered' ? o.judge?.(c, outcome) : undefined);
        if (problem) problems.push(`request ${round * perRound + i} (${c.what}): ${problem}; sent ${JSON.stringify(c.bytes.subarray(0, 160).toString('latin1'))}`);
      }),
      ...tlsCases.slice(round * tlsPerRound, (round + 1) * tlsPerRound).map((c, i) => async () => {
        const what = await tlsExchange(o.target, c, o.times?.closeMs);
        count(`handshake ${what}`);
        if (what === 'kept') problems.push(`handshake ${round * tlsPerRound + i} (${c.what}): the server kept the connection open`);
        if (what === 'handshake' && c.client?.maxVersion) problems.push(`handshake ${round * tlsPerRound + i} (${c.what}): the server accepted it`);
      }),
    ];
    let next = 0;
    await Promise.all(Array.from({ length: parallel }, async () => {
      while (next < batch.length) await batch[next++]();
    }));
    await checkGood(`after round ${round + 1}`);
  }

  const slowClosedMs: Record<string, number[]> = {};
  if (slow.length > 0) {
    const deadline = slowStarted + Math.max(...slow.map((c) => slowBoundMs(c.what)));
    let lastGood = Date.now();
    while (slow.some((s) => s.closedAfterMs === undefined) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      // Good clients are served while the slow ones hang on.
      if (Date.now() - lastGood > 2_000) {
        await checkGood('while slow clients were open');
        lastGood = Date.now();
      }
    }
    for (const s of slow) {
      const bound = slowBoundMs(s.what);
      if (s.closedAfterMs === undefined || s.closedAfterMs > bound) problems.push(`slow client (${s.what}): still open after ${bound} ms`);
      if (s.closedAfterMs !== undefined) (slowClosedMs[s.what] ??= []).push(s.closedAfterMs);
      s.stop();
    }
  }
  // Every connection of the run is closed on the client's side now: the server must let go of its sockets too.
  const closedAt = Date.now();
  const holding = () => [serverHolds(o.target, opened), o.upstream ? connectionsTo(o.upstream) : 0];
  let [kept, passedOn] = holding();
  while ((kept > 0 || passedOn > 0) && Date.now() - closedAt < 10_000) {
    await new Promise((r) => setTimeout(r, 250));
    [kept, passedOn] = holding();
  }
  if (kept > 0) problems.push(`the server still holds ${kept} sockets of connections its clients closed 10 s ago`);
  if (passedOn > 0) problems.push(`the server still holds ${passedOn} connections to its upstream 10 s after its clients closed theirs`);
  await checkGood('at the end');
  const heapGrowthBytes = heapAfterGc() - heapBefore;
  if (heapGrowthBytes > MAX_HEAP_GROWTH_BYTES) problems.push(`the heap grew by ${(heapGrowthBytes / 2 ** 20).toFixed(0)} MiB over the run (at most ${MAX_HEAP_GROWTH_BYTES / 2 ** 20} MiB)`);
  const statuses = Object.entries(counts).sort().map(([k, v]) => `${k}: ${v}`).join(', ');
  const summary = `fuzz ${o.name}: seed ${o.seed} (FUZZ_SEED=${o.seed} replays it); ${requests} requests, ${tlsCases.length} handshakes, ${slow.length} slow clients; ${statuses}; heap ${(heapGrowthBytes / 2 ** 20).toFixed(1)} MiB`;
  return { seed: o.seed, problems, counts, slowClosedMs, heapGrowthBytes, summary };
}

/** Fails with the run's summary and its first problems (the seed first, to replay it). */
export function assertNoProblems(report: FuzzReport): void {
  if (report.problems.length === 0) return;
  // The server-wide ones (slow clients, good requests) first, then the answers.
  const ordered = [...report.problems.filter((p) => !p.startsWith('request ')), ...report.problems.filter((p) => p.startsWith('request '))];
  const shown = ordered.slice(0, 40).map((p) => `  - ${p.slice(0, 400)}`).join('\n');
  const more = report.problems.length > 40 ? `\n  … and ${report.problems.length - 40} more` : '';
  assert.fail(`${report.summary}\n${report.problems.length} problems:\n${shown}${more}`);
}
