// Asking a Cincinnati-compatible update service for a channel's graph, with failures mapped to
// OpenShift's RetrievedUpdates reasons (InvalidURI, NoChannel, RemoteFailed, ResponseFailed,
// ResponseInvalid). Used by `bosun adm upgrade recommend` and by the CVO's update poller.
import { BosunError } from '../../common/errors.js';
import { httpCall, type HttpAnswer } from '../../common/http-client.js';
import { CHANNEL_PATTERN, GRAPH_PATH, type GraphResponse } from '../../cincinnati/graph-api.js';
import { parseGraphResponse } from './graph-walk.js';

export type RetrievalReason = 'InvalidURI' | 'NoChannel' | 'RemoteFailed' | 'ResponseFailed' | 'ResponseInvalid';

export class RetrievalError extends BosunError {
  constructor(
    override readonly reason: RetrievalReason,
    message: string,
  ) {
    super(reason, message);
  }
}

export interface GraphQuery {
  /** spec.upstream: the graph URL, or a bare service URL (the graph path is then added). */
  upstream: string;
  channel: string;
  arch?: string;
  version?: string;
  id?: string;
}

/** The request URL for a query; throws InvalidURI / NoChannel. */
export function graphURL(q: GraphQuery): URL {
  let url: URL;
  try {
    url = new URL(q.upstream);
  } catch {
    throw new RetrievalError('InvalidURI', `upstream ${JSON.stringify(q.upstream)} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new RetrievalError('InvalidURI', `upstream ${q.upstream} must be http or https`);
  if (!q.channel) throw new RetrievalError('NoChannel', 'no channel is set; choose one (e.g. stable-1.0) to receive updates');
  if (!CHANNEL_PATTERN.test(q.channel)) throw new RetrievalError('NoChannel', `channel ${JSON.stringify(q.channel)} is not a valid channel name`);
  if (url.pathname === '/' || url.pathname === '') url.pathname = GRAPH_PATH;
  url.searchParams.set('channel', q.channel);
  url.searchParams.set('arch', q.arch ?? 'amd64');
  if (q.version) url.searchParams.set('version', q.version);
  if (q.id) url.searchParams.set('id', q.id);
  return url;
}

export async function fetchUpdateGraph(q: GraphQuery, options: { timeoutMs?: number } = {}): Promise<GraphResponse> {
  const url = graphURL(q);
  let response: HttpAnswer;
  try {
    response = await httpCall(url, { headers: { accept: 'application/json' }, timeoutMs: options.timeoutMs ?? 30_000 });
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new RetrievalError('RemoteFailed', `unable to reach the update service at ${url.origin}: ${cause?.code ?? cause?.message ?? (err as Error).message}`);
  }
  const text = response.text();
  if (!response.ok) {
    let detail = text.slice(0, 200);
    try {
      const e = JSON.parse(text) as { kind?: string; value?: string };
      if (e.kind) detail = `${e.kind}: ${e.value}`;
    } catch {
      // not a Cincinnati error body; the raw text is the best detail there is
    }
    throw new RetrievalError('ResponseFailed', `the update service at ${url.origin} answered ${response.status}${detail ? ` (${detail})` : ''}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new RetrievalError('ResponseInvalid', `the update service at ${url.origin} answered something that is not JSON`);
  }
  try {
    return parseGraphResponse(body);
  } catch (err) {
    throw new RetrievalError('ResponseInvalid', (err as Error).message);
  }
}
