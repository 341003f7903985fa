// The update service's HTTP server (fastify): the Cincinnati graph API answered from precomputed
// per-channel bodies, plus the release store and the signature store served as files.
//
// Routes:
//   GET /api/upgrades_info/v1/graph?channel=C[&arch=A][&id=UUID][&version=V]
//       Accept application/json or application/vnd.redhat.cincinnati.v1+json (wildcards and a
//       missing Accept get application/json; anything else 406). Errors are {"kind","value"}.
//       The whole channel is answered; `id` and `version` are accepted and, as in Cincinnati,
//       do not change the answer (the client finds its own node).
//   GET /releases                              JSON list of releases [{version, arch, payload, url}]
//   GET /releases/sha256=<hex>/                JSON {"files": [relative paths]} of one payload
//   GET /releases/sha256=<hex>/<path>          one payload file (release-manifests/…, manifests/…)
//   GET /signatures/sha256=<hex>/signature-<n> one signature; `<base>/signatures` is a signature
//                                              store URL in OpenShift's layout
//   GET /healthz                               200 "ok" once a graph is loaded
//
// Reload: the graph-data directory and the release store are watched (fs.watch, debounced); a
// change rebuilds everything; a bad reload keeps the previous graph and logs why.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { watch, type FSWatcher, existsSync, statSync, readdirSync, createReadStream } from 'node:fs';
import { join, resolve, sep, relative } from 'node:path';
import { logger } from '../common/log.js';
import { answerClientError, clientErrorOf, REQUEST_LIMITS, REQUEST_TIMEOUT_MS } from '../common/http-limits.js';
import { CHANNEL_PATTERN, GRAPH_MEDIA_TYPES, GRAPH_PATH } from '../cincinnati/graph-api.js';
import { loadGraphData } from './graph-data.js';
import { loadReleaseStore } from './release-store.js';
import { lookup, precompute, type PrecomputedGraphs } from './responses.js';

const log = logger('update-service');

export interface UpdateServiceOptions {
  graphData: string;
  releases: string;
  signatures?: string;
  host?: string;
  port?: number;
  /** Debounce for directory changes (ms). */
  reloadDelayMs?: number;
}

export interface UpdateService {
  url: string;
  /** Rebuilds from disk now; returns false (keeping the previous graph) when the data is bad. */
  reload(): boolean;
  current(): PrecomputedGraphs;
  /** Incremented on every successful load, for callers waiting on a reload. */
  generation(): number;
  close(): Promise<void>;
}

const ARCH_PATTERN = /^[0-9a-z_-]+$/;
const DIGEST_SEGMENT = /^sha256=[0-9a-f]{64}$/;
const FILE_SEGMENT = /^[A-Za-z0-9._=+-]+$/;

/** Picks the media type to answer with, or undefined when the client accepts neither (406). */
export function negotiate(accept: string | undefined): string | undefined {
  if (!accept || accept.trim() === '') return GRAPH_MEDIA_TYPES[0];
  const ranges = accept
    .split(',')
    .map((part, i) => {
      const [type, ...params] = part.trim().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { type: type.trim().toLowerCase(), q: q ? Number(q.slice(2)) : 1, i };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  for (const r of ranges) {
    if ((GRAPH_MEDIA_TYPES as readonly string[]).includes(r.type)) return r.type;
    if (r.type === '*/*' || r.type === 'application/*') return GRAPH_MEDIA_TYPES[0];
  }
  return undefined;
}

function sendError(reply: FastifyReply, status: number, kind: string, value: string): FastifyReply {
  return reply.code(status).type('application/json').send({ kind, value });
}

function load(options: UpdateServiceOptions): PrecomputedGraphs {
  return precompute(loadReleaseStore(options.releases), loadGraphData(options.graphData));
}

/** Lists a directory's files recursively, relative to it, in name order. */
function listFiles(dir: string, prefix = ''): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path, `${prefix}${name}/`));
    else out.push(`${prefix}${name}`);
  }
  return out;
}

/** Resolves URL path segments under root, refusing anything that is not a plain name. */
function safePath(root: string, segments: string[]): string | undefined {
  if (segments.some((s) => !FILE_SEGMENT.test(s) || s === '.' || s === '..')) return undefined;
  const path = resolve(root, ...segments);
  const rel = relative(resolve(root), path);
  if (rel.startsWith('..') || rel.includes(`..${sep}`)) return undefined;
  return path;
}

export async function startUpdateService(options: UpdateServiceOptions): Promise<UpdateService> {
  let pre = load(options); // a bad start is fatal: there is no previous graph to keep
  let gen = 1;
  log.info({ ...pre.graph.stats, channels: pre.graph.channels.size }, 'graph loaded');

  const reload = (): boolean => {
    try {
      const next = load(options);
      pre = next;
      gen++;
      log.info({ ...next.graph.stats, channels: next.graph.channels.size, generation: gen }, 'graph reloaded');
      return true;
    } catch (err) {
      log.error({ err: (err as Error).message }, 'graph reload failed; keeping the previous graph');
      return false;
    }
  };

  const app: FastifyInstance = Fastify({
    logger: false, forceCloseConnections: true,
    // Slow clients are cut off, and requests Node cannot parse answered in the API's own form (common/http-limits.ts).
    http: REQUEST_LIMITS, requestTimeout: REQUEST_TIMEOUT_MS,
    clientErrorHandler: (err, socket) => answerClientError(socket, clientErrorOf(err), ({ message }) => ({ contentType: 'application/json', body: JSON.stringify({ kind: 'invalid_request', value: message }) })),
    frameworkErrors: (err, _req, reply) => sendError(reply, 400, 'invalid_request', err.message),
  });

  app.get(GRAPH_PATH, async (req: FastifyRequest, reply) => {
    const mediaType = negotiate(req.headers.accept);
    if (!mediaType) return sendError(reply, 406, 'invalid_content_type', `accept one of ${GRAPH_MEDIA_TYPES.join(', ')}; got ${JSON.stringify(req.headers.accept)}`);
    const q = req.query as Record<string, unknown>;
    if (q.channel === undefined || q.channel === '') return sendError(reply, 400, 'missing_params', 'mandatory client parameters missing: channel');
    for (const name of ['channel', 'arch', 'id', 'version']) {
      if (q[name] !== undefined && typeof q[name] !== 'string') return sendError(reply, 400, 'invalid_params', `parameter "${name}" given more than once`);
    }
    const channel = q.channel as string;
    if (!CHANNEL_PATTERN.test(channel)) return sendError(reply, 400, 'invalid_params', `channel ${JSON.stringify(channel)} does not match ${CHANNEL_PATTERN}`);
    const arch = (q.arch as string | undefined) || 'amd64';
    if (!ARCH_PATTERN.test(arch)) return sendError(reply, 400, 'invalid_params', `arch ${JSON.stringify(arch)} does not match ${ARCH_PATTERN}`);
    return reply.code(200).type(mediaType).send(lookup(pre, channel, arch));
  });

  app.get('/healthz', async (_req, reply) => reply.type('text/plain').send('ok'));

  app.get('/releases', async (req, reply) => {
    const base = `${req.protocol}://${req.headers.host}`;
    const list = [...pre.graph.releases.values()].map((r) => {
      const digest = r.payload.split('@')[1].replace(':', '=');
      return { version: r.version, arch: r.arch, payload: r.payload, url: `${base}/releases/${digest}/` };
    });
    return reply.type('application/json').send(list);
  });

  app.get('/releases/*', async (req, reply) => {
    const rest = (req.params as { '*': string })['*'];
    const segments = rest.split('/').filter((s) => s !== '');
    if (segments.length === 0 || !DIGEST_SEGMENT.test(segments[0])) return sendError(reply, 404, 'not_found', `no release ${JSON.stringify(rest)}; expected /releases/sha256=<hex>/…`);
    const path = safePath(options.releases, segments);
    if (!path || !existsSync(path)) return sendError(reply, 404, 'not_found', `no such release file: ${rest}`);
    if (statSync(path).isDirectory()) return reply.type('application/json').send({ files: listFiles(path) });
    return reply.type('application/octet-stream').send(createReadStream(path));
  });

  app.get('/signatures/:digest/:name', async (req, reply) => {
    const { digest, name } = req.params as { digest: string; name: string };
    if (!options.signatures) return sendError(reply, 404, 'not_found', 'this update service serves no signature store');
    if (!DIGEST_SEGMENT.test(digest) || !/^signature-[1-9][0-9]*$/.test(name)) return sendError(reply, 404, 'not_found', `expected /signatures/sha256=<hex>/signature-<n>, got /signatures/${digest}/${name}`);
    const path = join(options.signatures, digest, name);
    if (!existsSync(path)) return sendError(reply, 404, 'not_found', `no signature ${digest}/${name}`);
    return reply.type('application/octet-stream').send(createReadStream(path));
  });

  app.setNotFoundHandler((req, reply) => sendError(reply, 404, 'not_found', `no route ${req.method} ${req.url.split('?')[0]}`));
  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    const status = err.statusCode ?? 500;
    if (status >= 500) log.error({ err: err.message }, 'request failed');
    return sendError(reply, status, status >= 500 ? 'internal_error' : 'invalid_request', err.message);
  });

  // Watch both inputs; editors and `release build` touch several files at once, hence the debounce.
  const watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  const schedule = (): void => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      reload();
    }, options.reloadDelayMs ?? 250);
  };
  for (const dir of [options.graphData, options.releases]) {
    if (!existsSync(dir)) continue;
    const w = watch(dir, { recursive: true }, schedule);
    w.on('error', (err) => log.warn({ dir, err: err.message }, 'watch failed; reloads from this directory stop'));
    watchers.push(w);
  }

  const address = await app.listen({ host: options.host ?? '127.0.0.1', port: options.port ?? 8080 });
  log.info({ url: address }, 'update service listening');

  return {
    url: address,
    reload,
    current: () => pre,
    generation: () => gen,
    close: async () => {
      if (timer) clearTimeout(timer);
      for (const w of watchers) w.close();
      await app.close();
    },
  };
}
