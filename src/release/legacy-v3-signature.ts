// Verification of OpenPGP version 3 RSA signatures (RFC 4880 §5.2.2), the kind Red Hat's signing
// service still produces for OpenShift release signatures: a (compressed) message of one-pass
// signature, literal data and a v3 signature packet. openpgp.js 6 dropped v3 signatures, so this
// file parses just enough of the packet stream to check them with node:crypto; keys still come
// from openpgp.js.
import { createPublicKey, verify as cryptoVerify, constants } from 'node:crypto';
import { inflateRawSync, inflateSync } from 'node:zlib';
import type { Key } from 'openpgp';
import { SignatureError } from './signature-error.js';

interface Packet {
  tag: number;
  body: Uint8Array;
}

export interface V3Signature {
  /** The literal data that was signed. */
  data: Uint8Array;
  sigClass: number;
  created: Uint8Array;
  keyID: string;
  publicKeyAlgorithm: number;
  hashAlgorithm: number;
  hashPrefix: Uint8Array;
  mpi: Uint8Array;
}

const HASHES: Record<number, string> = { 2: 'sha1', 8: 'sha256', 9: 'sha384', 10: 'sha512', 11: 'sha224' };

function readPackets(bytes: Uint8Array): Packet[] {
  const packets: Packet[] = [];
  let i = 0;
  while (i < bytes.length) {
    const ctb = bytes[i++];
    if ((ctb & 0x80) === 0) throw new Error(`bad packet header 0x${ctb.toString(16)}`);
    if (ctb & 0x40) {
      // New format; partial lengths are concatenated.
      const tag = ctb & 0x3f;
      const chunks: Uint8Array[] = [];
      for (;;) {
        const o1 = bytes[i++];
        let len: number;
        let partial = false;
        if (o1 < 192) len = o1;
        else if (o1 < 224) len = ((o1 - 192) << 8) + bytes[i++] + 192;
        else if (o1 === 255) {
          len = ((bytes[i] << 24) | (bytes[i + 1] << 16) | (bytes[i + 2] << 8) | bytes[i + 3]) >>> 0;
          i += 4;
        } else {
          len = 1 << (o1 & 0x1f);
          partial = true;
        }
        chunks.push(bytes.subarray(i, i + len));
        i += len;
        if (!partial) break;
      }
      packets.push({ tag, body: Buffer.concat(chunks) });
    } else {
      const tag = (ctb >> 2) & 0x0f;
      const lengthType = ctb & 3;
      let len: number;
      if (lengthType === 0) len = bytes[i++];
      else if (lengthType === 1) {
        len = (bytes[i] << 8) | bytes[i + 1];
        i += 2;
      } else if (lengthType === 2) {
        len = ((bytes[i] << 24) | (bytes[i + 1] << 16) | (bytes[i + 2] << 8) | bytes[i + 3]) >>> 0;
        i += 4;
      } else len = bytes.length - i;
      packets.push({ tag, body: bytes.subarray(i, i + len) });
      i += len;
    }
    if (i > bytes.length) throw new Error('truncated packet');
  }
  return packets;
}

function decompress(body: Uint8Array): Uint8Array {
  const algorithm = body[0];
  const rest = body.subarray(1);
  if (algorithm === 0) return rest;
  if (algorithm === 1) return inflateRawSync(rest);
  if (algorithm === 2) return inflateSync(rest);
  throw new Error(`unsupported compression algorithm ${algorithm}`);
}

/** Finds a v3 signature over literal data in a message; undefined when the message is not of that kind. */
export function findV3Signature(message: Uint8Array): V3Signature | undefined {
  let packets: Packet[];
  try {
    packets = readPackets(message);
    while (packets.length === 1 && packets[0].tag === 8) packets = readPackets(decompress(packets[0].body));
  } catch {
    return undefined; // not parseable here: let openpgp.js report it
  }
  const sig = packets.find((p) => p.tag === 2);
  const literal = packets.find((p) => p.tag === 11);
  if (!sig || !literal || sig.body[0] !== 3) return undefined;
  const b = sig.body;
  if (b[1] !== 5) throw new SignatureError('Malformed', 'v3 signature with a hashed section that is not 5 bytes');
  const nameLength = literal.body[1];
  return {
    data: literal.body.subarray(2 + nameLength + 4),
    sigClass: b[2],
    created: b.subarray(3, 7),
    keyID: Buffer.from(b.subarray(7, 15)).toString('hex').toUpperCase(),
    publicKeyAlgorithm: b[15],
    hashAlgorithm: b[16],
    hashPrefix: b.subarray(17, 19),
    mpi: b.subarray(19),
  };
}

function toBase64Url(bytes: Uint8Array): string {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  return Buffer.from(bytes.subarray(start)).toString('base64url');
}

/** Verifies a v3 RSA signature against a keyring; returns the signing key's ID and user IDs. */
export function verifyV3Signature(sig: V3Signature, keyring: Key[]): { keyID: string; userIDs: string[] } {
  if (sig.publicKeyAlgorithm !== 1 && sig.publicKeyAlgorithm !== 3) throw new SignatureError('Malformed', `v3 signature with public-key algorithm ${sig.publicKeyAlgorithm}; only RSA is supported`);
  const hash = HASHES[sig.hashAlgorithm];
  if (!hash) throw new SignatureError('Malformed', `v3 signature with unsupported hash algorithm ${sig.hashAlgorithm}`);
  if (sig.sigClass !== 0x00) throw new SignatureError('Malformed', `v3 signature of class 0x${sig.sigClass.toString(16)}; expected a binary document signature`);
  for (const key of keyring) {
    for (const sub of key.getKeys()) {
      if (sub.getKeyID().toHex().toUpperCase() !== sig.keyID) continue;
      const params = sub.keyPacket.publicParams as { n?: Uint8Array; e?: Uint8Array };
      if (!params.n || !params.e) continue;
      const publicKey = createPublicKey({ key: { kty: 'RSA', n: toBase64Url(params.n), e: toBase64Url(params.e) }, format: 'jwk' });
      const modulusBytes = Math.ceil((publicKey.asymmetricKeyDetails?.modulusLength ?? 0) / 8);
      const bits = (sig.mpi[0] << 8) | sig.mpi[1];
      const value = sig.mpi.subarray(2, 2 + Math.ceil(bits / 8));
      const padded = Buffer.concat([Buffer.alloc(Math.max(0, modulusBytes - value.length)), value]);
      const signed = Buffer.concat([sig.data, Buffer.from([sig.sigClass]), sig.created]);
      const ok = cryptoVerify(hash, signed, { key: publicKey, padding: constants.RSA_PKCS1_PADDING }, padded);
      if (!ok) throw new SignatureError('BadSignature', `the signature by ${sig.keyID} does not verify: the signed content was altered`);
      return { keyID: sig.keyID, userIDs: key.getUserIDs() };
    }
  }
  throw new SignatureError('UntrustedKey', `signed by key ${sig.keyID}, which is not in the trusted keyring (${keyring.map((k) => k.getKeyID().toHex().toUpperCase()).join(', ')})`);
}
