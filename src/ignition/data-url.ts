// RFC 2397 data URLs, as Ignition reads them for inline file contents: decoding (to check that a
// config's contents are readable, and to write files) and encoding (for files bosun adds).

import { BosunError } from '../common/errors.js';
export class DataUrlError extends BosunError {
  constructor(message: string, options?: ErrorOptions) {
    super('DataUrlInvalid', message, options);
  }
}

/** Decodes `data:[<mediatype>][;base64],<data>`; throws DataUrlError when it cannot. */
export function decodeDataUrl(url: string): Buffer {
  if (!url.startsWith('data:')) throw new DataUrlError('not a data URL');
  const comma = url.indexOf(',');
  if (comma < 0) throw new DataUrlError('data URL has no comma before its data');
  const meta = url.slice(5, comma);
  const data = url.slice(comma + 1);
  if (meta.split(';').some((p) => p.toLowerCase() === 'base64')) {
    const compact = percentDecode(data).toString('latin1').replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
      throw new DataUrlError('data URL has invalid base64 data');
    }
    return Buffer.from(compact, 'base64');
  }
  return percentDecode(data);
}

function percentDecode(s: string): Buffer {
  const out: number[] = [];
  const raw = Buffer.from(s, 'utf8');
  for (let i = 0; i < raw.length; i++) {
    const b = raw[i];
    if (b !== 0x25) { out.push(b); continue; }
    const hex = raw.subarray(i + 1, i + 3).toString('latin1');
    if (!/^[0-9A-Fa-f]{2}$/.test(hex)) throw new DataUrlError(`data URL has an invalid percent escape at offset ${i}`);
    out.push(parseInt(hex, 16));
    i += 2;
  }
  return Buffer.from(out);
}

/** A base64 data URL for the given bytes or text. */
export function encodeDataUrl(content: string | Buffer): string {
  return `data:;base64,${Buffer.from(content).toString('base64')}`;
}
