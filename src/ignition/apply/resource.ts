// Fetching an Ignition resource as Ignition's fetcher does: `data:` URLs, http(s) URLs (the
// resource's httpHeaders, the config's CAs added to the system's, redirects followed), gzip
// decompression, and `verification.hash` (sha512/sha256) checked over the decompressed bytes, as
// Ignition checks it. Errors say whether retrying may help (network, 5xx) or not.
import { BosunError } from '../../common/errors.js';
import { createHash } from 'node:crypto';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { rootCertificates } from 'node:tls';
import { gunzipSync } from 'node:zlib';
import { decodeDataUrl, DataUrlError } from '../data-url.js';
import type { Resource } from '../types.js';

export class ResourceError extends BosunError {
  constructor(message: string, readonly retriable: boolean) {
    super(retriable ? 'IgnitionResourceUnavailable' : 'IgnitionResourceFailed', message);
  }
}

export interface FetchOptions {
  /** PEM CAs trusted for https, in addition to the system's. */
  cas: string[];
  /** Extra request headers (the Accept header for configs). */
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Per-request limit (Ignition's timeouts.httpResponseHeaders; default 10 s). */
  timeoutMs?: number;
}

const USER_AGENT = 'bosun-ignition (Ignition-compatible)';
const MAX_REDIRECTS = 10;

/** The bytes a resource describes, decompressed and verified. */
export async function fetchResource(resource: Resource, opts: FetchOptions): Promise<Buffer> {
  const source = resource.source ?? '';
  let raw: Buffer;
  if (source === '') raw = Buffer.alloc(0);
  else if (source.startsWith('data:')) {
    try { raw = decodeDataUrl(source); } catch (e) {
      if (e instanceof DataUrlError) throw new ResourceError(`cannot decode data URL: ${e.message}`, false);
      throw e;
    }
  } else if (/^https?:/.test(source)) {
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, ...opts.headers };
    for (const h of resource.httpHeaders ?? []) headers[h.name.toLowerCase()] = h.value ?? '';
    raw = await httpGet(source, headers, opts, 0);
  } else {
    throw new ResourceError(`unsupported source "${source.split(':')[0]}:" (bosun's Ignition fetches data:, http: and https:)`, false);
  }
  const contents = decompress(raw, resource.compression, source);
  verify(contents, resource.verification?.hash, source);
  return contents;
}

function decompress(raw: Buffer, compression: string | null | undefined, source: string): Buffer {
  if (!compression) return raw;
  if (compression !== 'gzip') throw new ResourceError(`unsupported compression "${compression}"`, false);
  try { return gunzipSync(raw); } catch (e) {
    throw new ResourceError(`cannot gunzip ${describe(source)}: ${(e as Error).message}`, false);
  }
}

function verify(contents: Buffer, hash: string | null | undefined, source: string): void {
  if (!hash) return;
  const [algorithm, expected] = hash.split('-', 2);
  const calculated = createHash(algorithm).update(contents).digest('hex');
  if (calculated !== expected) throw new ResourceError(`hash verification failed for ${describe(source)} (calculated ${algorithm}-${calculated}, expected ${hash})`, false);
}

function describe(source: string): string {
  return source.startsWith('data:') ? 'a data URL' : source;
}

function httpGet(url: string, headers: Record<string, string>, opts: FetchOptions, redirects: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const https = url.startsWith('https:');
    const common = { headers, signal: opts.signal, timeout: opts.timeoutMs ?? 10_000 };
    const req = https ? httpsRequest(url, { ...common, ca: [...rootCertificates, ...opts.cas] }) : httpRequest(url, common);
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (e) => reject(opts.signal?.aborted ? e : new ResourceError(`GET ${url}: ${e.message}`, true)));
    req.on('response', (res: IncomingMessage) => {
      const status = res.statusCode ?? 0;
      if (status >= 300 && status < 400 && res.headers.location) {
        res.resume();
        if (redirects >= MAX_REDIRECTS) return reject(new ResourceError(`GET ${url}: too many redirects`, false));
        return resolve(httpGet(new URL(res.headers.location, url).href, headers, opts, redirects + 1));
      }
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (e) => reject(new ResourceError(`GET ${url}: ${e.message}`, true)));
      res.on('end', () => {
        const body = Buffer.concat(chunks);
        if (status >= 200 && status < 300) resolve(body);
        // A server that is not ready yet (the machine-config server before the pool renders)
        // answers an error; a booting machine keeps asking, as Ignition does.
        else reject(new ResourceError(`GET ${url}: ${status} ${body.toString('utf8', 0, 200).trim()}`, true));
      });
    });
    req.end();
  });
}
