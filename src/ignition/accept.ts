// Accept-header negotiation between Ignition clients and the machine-config server: which
// Ignition spec version to serve (the local cloud's fetch stage asks as Ignition does). Clients
// ask with `application/vnd.coreos.ignition+json;version=X` entries, q-ordered. 3.x is served at
// that minor when bosun knows it (a newer 3.x minor gets the newest bosun knows), any 2.x gets the
// 2.2 translation, and a request without Ignition entries gets DEFAULT_VERSION. OpenShift's
// default is 2.2; bosun defaults to 3.4.0, which every client since Ignition 2.15 reads and which
// can express everything a rendered config normally holds (kernelArguments).
import { LATEST_SPEC3_MINOR, parseSpecVersion, formatSpec3, isSpec3Minor } from './version.js';

export const IGNITION_MEDIA_TYPE = 'application/vnd.coreos.ignition+json';
export const DEFAULT_VERSION = '3.4.0';

export type Negotiation =
  /** candidates: versions to try, best first (a later one is used if translation fails). */
  | { ok: true; candidates: string[] }
  | { ok: false; message: string };

interface Entry { version: string | undefined; q: number; order: number }

export function negotiateVersion(accept: string | undefined): Negotiation {
  if (!accept) return { ok: true, candidates: [DEFAULT_VERSION] };
  const entries: Entry[] = [];
  accept.split(',').forEach((part, order) => {
    const [type, ...params] = part.split(';').map((s) => s.trim());
    if (type.toLowerCase() !== IGNITION_MEDIA_TYPE) return;
    let q = 1;
    let version: string | undefined;
    for (const p of params) {
      const eq = p.indexOf('=');
      if (eq < 0) continue;
      const name = p.slice(0, eq).trim().toLowerCase();
      const value = p.slice(eq + 1).trim().replace(/^"|"$/g, '');
      if (name === 'q') q = Number(value);
      else if (name === 'version') version = value;
    }
    if (Number.isFinite(q) && q > 0) entries.push({ version, q, order });
  });
  if (entries.length === 0) return { ok: true, candidates: [DEFAULT_VERSION] };
  entries.sort((a, b) => b.q - a.q || a.order - b.order);
  const candidates: string[] = [];
  for (const e of entries) {
    const served = servedVersionFor(e.version);
    if (served && !candidates.includes(served)) candidates.push(served);
  }
  if (candidates.length === 0) {
    const asked = entries.map((e) => e.version ?? '(none)').join(', ');
    return { ok: false, message: `unsupported Ignition spec version requested: ${asked} (this server serves 3.0.0–3.5.0 and 2.2.0)` };
  }
  return { ok: true, candidates };
}

function servedVersionFor(requested: string | undefined): string | undefined {
  if (requested === undefined) return DEFAULT_VERSION;
  const v = parseSpecVersion(requested);
  if (!v) return undefined;
  if (v.major === 2) return '2.2.0';
  if (v.major !== 3) return undefined;
  return formatSpec3(isSpec3Minor(v.minor) ? v.minor : LATEST_SPEC3_MINOR);
}
