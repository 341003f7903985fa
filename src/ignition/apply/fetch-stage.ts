// Ignition's fetch stage, in bosun: from the user data (usually a pointer config) to the config
// the files stage applies. `ignition.config.replace` fetches a config that takes the place of this
// one; each `ignition.config.merge` source is fetched and merged over it in order (child wins),
// each fetched config rendered the same way first. Configs are asked for with the Accept header
// Ignition sends, over https trusting the config's `ignition.security.tls.certificateAuthorities`.
// A source that cannot be reached yet (network error, non-2xx) is retried with back-off until it
// answers or the boot is aborted, as a booting machine waits for its machine-config server.
import { BosunError } from '../../common/errors.js';
import { mergeConfigs } from '../merge.js';
import { parseConfig, IgnitionConfigError } from '../parse.js';
import type { IgnitionConfig, Resource } from '../types.js';
import { LATEST_SPEC3_MINOR, formatSpec3 } from '../version.js';
import { IGNITION_MEDIA_TYPE } from '../accept.js';
import { fetchResource, ResourceError } from './resource.js';

/** What Ignition sends for configs: its newest spec version, anything else as a fallback. */
export const CONFIG_ACCEPT = `${IGNITION_MEDIA_TYPE};version=${formatSpec3(LATEST_SPEC3_MINOR)}, */*;q=0.1`;

/** Ignition refuses configs referencing configs deeper than this. */
const MAX_DEPTH = 10;

export class FetchStageError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('IgnitionFetchFailed', message, options);
  }
}

export interface FetchStageOptions {
  signal: AbortSignal;
  /** Called with a line of progress (what is fetched, why it is retried). */
  report?: (message: string) => void;
  retryInitialMs?: number;
  retryMaxMs?: number;
}

export interface FetchedConfig {
  config: IgnitionConfig;
  /** The rendered config's CAs (PEM), which the files stage trusts for https file sources. */
  cas: string[];
}

/** The fully rendered config for `userData` (JSON text of an Ignition 3.x config). */
export async function fetchStage(userData: string, opts: FetchStageOptions): Promise<FetchedConfig> {
  const config = await render(parse(userData, 'the user data'), [], 0, opts);
  return { config, cas: await fetchCas(config, [], opts) };
}

async function fetchCas(config: IgnitionConfig, inherited: string[], opts: FetchStageOptions): Promise<string[]> {
  const cas = [...inherited];
  for (const ca of config.ignition.security?.tls?.certificateAuthorities ?? []) {
    cas.push((await fetchWithRetry(ca, { cas }, opts)).toString('utf8'));
  }
  return cas;
}

function parse(text: string, what: string): IgnitionConfig {
  try { return parseConfig(text).config; } catch (e) {
    if (e instanceof IgnitionConfigError) throw new FetchStageError(`${what}: ${e.message}`);
    throw e;
  }
}

async function render(config: IgnitionConfig, inheritedCas: string[], depth: number, opts: FetchStageOptions): Promise<IgnitionConfig> {
  if (depth > MAX_DEPTH) throw new FetchStageError(`configs reference each other more than ${MAX_DEPTH} levels deep`);
  const cas = await fetchCas(config, inheritedCas, opts);
  const replace = config.ignition.config?.replace;
  if (replace?.source) return render(await fetchConfig(replace, cas, opts), cas, depth + 1, opts);
  let result = config;
  for (const source of config.ignition.config?.merge ?? []) {
    const child = await render(await fetchConfig(source, cas, opts), cas, depth + 1, opts);
    result = mergeConfigs(result, child);
  }
  return result;
}

async function fetchConfig(resource: Resource, cas: string[], opts: FetchStageOptions): Promise<IgnitionConfig> {
  const bytes = await fetchWithRetry(resource, { cas, headers: { accept: CONFIG_ACCEPT } }, opts);
  return parse(bytes.toString('utf8'), `the config from ${resource.source}`);
}

async function fetchWithRetry(resource: Resource, fetch: { cas: string[]; headers?: Record<string, string> }, opts: FetchStageOptions): Promise<Buffer> {
  let delay = opts.retryInitialMs ?? 200;
  for (;;) {
    opts.signal.throwIfAborted();
    try {
      return await fetchResource(resource, { ...fetch, signal: opts.signal });
    } catch (e) {
      if (!(e instanceof ResourceError)) throw e;
      if (!e.retriable) throw new FetchStageError(e.message);
      opts.report?.(`${e.message}; retrying in ${delay} ms`);
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      opts.signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
    });
    delay = Math.min(delay * 2, opts.retryMaxMs ?? 5_000);
  }
}
