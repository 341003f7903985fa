// Signature stores in the containers/image layout OpenShift uses: `<store>/sha256=<hex>/signature-<n>`,
// n counting from 1. A directory on disk (what `bosun release sign` writes and the update service
// serves) or an HTTP(S) URL (what `spec.signatureStores` and `store-*` verification keys name).
import { existsSync, mkdirSync, readFileSync, writeFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { httpCall, type HttpAnswer } from '../common/http-client.js';

/** Stop after this many signatures for one digest: a store that never 404s must not loop forever. */
const MAX_SIGNATURES = 16;

/** `<store>/sha256=<hex>` for a digest. */
export function signatureDir(store: string, digest: string): string {
  return join(store, digest.replace(':', '='));
}

/** The signatures stored for a digest, in index order (signature-1, signature-2, …). */
export function readStoredSignatures(store: string, digest: string): Uint8Array[] {
  const dir = signatureDir(store, digest);
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((f) => /^signature-([1-9][0-9]*)$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .sort((a, b) => Number(a[1]) - Number(b[1]))
    .map((m) => new Uint8Array(readFileSync(join(dir, m[0]))));
}

/** Stores a signature under the first free index; returns its path. */
export function storeSignature(store: string, digest: string, signature: Uint8Array): string {
  const dir = signatureDir(store, digest);
  mkdirSync(dir, { recursive: true });
  let n = 1;
  while (existsSync(join(dir, `signature-${n}`))) n++;
  const path = join(dir, `signature-${n}`);
  writeFileSync(path, signature);
  return path;
}

/**
 * Fetches signature-1, signature-2, … for a digest from an HTTP(S) store until one is missing
 * (404). Other failures throw, naming the URL, so a caller can tell "no signature" from "store down".
 */
export async function fetchSignatures(storeURL: string, digest: string, options: { timeoutMs?: number } = {}): Promise<Uint8Array[]> {
  const base = storeURL.replace(/\/+$/, '');
  const out: Uint8Array[] = [];
  for (let n = 1; n <= MAX_SIGNATURES; n++) {
    const url = `${base}/${digest.replace(':', '=')}/signature-${n}`;
    let res: HttpAnswer;
    try {
      res = await httpCall(url, { timeoutMs: options.timeoutMs ?? 30_000 });
    } catch (err) {
      const cause = (err as { cause?: { code?: string } }).cause;
      throw new Error(`signature store ${base} is unreachable (${cause?.code ?? (err as Error).message})`);
    }
    // A plain HTTP 404 from the store (not a Kubernetes Status): there is no signature-n, the list ends.
    const noSuchSignature = res.status === 404;
    if (noSuchSignature) break;
    if (!res.ok) throw new Error(`signature store answered ${res.status} for ${url}`);
    out.push(new Uint8Array(res.body));
  }
  return out;
}
