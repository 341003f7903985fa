// Release signatures the way OpenShift makes them: an OpenPGP signed message (binary, not
// detached) whose literal data is the "atomic container signature" JSON claim over a payload
// digest. Key generation, signing and verification against a keyring of armored public keys live
// here because the release tooling (sign) and the CVO (verify) both use them; where signatures
// are kept is signature-store.ts.
//
// Red Hat's own release signatures are version 3 signature packets, which openpgp.js 6 no longer
// parses; those are verified by legacy-v3-signature.ts, everything else by openpgp.js.
import * as openpgp from 'openpgp';
import { findV3Signature, verifyV3Signature } from './legacy-v3-signature.js';
import { SignatureError } from './signature-error.js';

export const SIGNATURE_TYPE = 'atomic container signature';
export const DEFAULT_CREATOR = 'bosun release signer';

export interface SignatureClaim {
  critical: {
    image: { 'docker-manifest-digest': string };
    type: string;
    identity: { 'docker-reference': string };
  };
  optional?: { creator?: string; timestamp?: number };
}

export interface VerifiedSignature {
  claim: SignatureClaim;
  /** Hex key ID of the key that made the signature. */
  keyID: string;
  /** User IDs of that key, for messages ("signed by Red Hat, Inc. (release key 2) …"). */
  signer: string[];
}

const DIGEST_PATTERN = /^sha256:[0-9a-f]{64}$/;

/** Splits `repo@sha256:<hex>` into its repository and digest; a tag-only pullspec has no digest to sign. */
export function parsePullspec(pullspec: string): { repository: string; digest: string } {
  const at = pullspec.lastIndexOf('@');
  const digest = at > 0 ? pullspec.slice(at + 1) : '';
  if (!DIGEST_PATTERN.test(digest)) throw new SignatureError('Malformed', `${JSON.stringify(pullspec)} is not a pullspec by digest (expected <repository>@sha256:<64 hex digits>)`);
  return { repository: pullspec.slice(0, at), digest };
}

export function buildClaim(pullspec: string, creator = DEFAULT_CREATOR, timestamp = Math.floor(Date.now() / 1000)): SignatureClaim {
  const { digest } = parsePullspec(pullspec);
  return {
    critical: { image: { 'docker-manifest-digest': digest }, type: SIGNATURE_TYPE, identity: { 'docker-reference': pullspec } },
    optional: { creator, timestamp },
  };
}

export interface SigningKey {
  privateKey: string;
  publicKey: string;
  fingerprint: string;
}

/**
 * A new RSA signing key. RSA, because the verifiers in the field (OpenShift's CVO on
 * golang.org/x/crypto/openpgp, gpg) all understand it.
 */
export async function generateSigningKey(name: string, email?: string, rsaBits = 3072): Promise<SigningKey> {
  const { privateKey, publicKey } = await openpgp.generateKey({
    type: 'rsa',
    rsaBits,
    userIDs: [{ name, ...(email ? { email } : {}) }],
    format: 'armored',
  });
  const key = await openpgp.readKey({ armoredKey: publicKey });
  return { privateKey, publicKey, fingerprint: key.getFingerprint().toUpperCase() };
}

/** Signs a payload by digest: the binary OpenPGP message to store as signature-<n>. */
export async function signRelease(pullspec: string, armoredPrivateKey: string, options: { creator?: string; timestamp?: number; passphrase?: string } = {}): Promise<Uint8Array> {
  const claim = buildClaim(pullspec, options.creator, options.timestamp);
  let signingKey = await openpgp.readPrivateKey({ armoredKey: armoredPrivateKey });
  if (!signingKey.isDecrypted()) {
    if (!options.passphrase) throw new SignatureError('BadKeyring', 'the signing key is protected by a passphrase; none was given');
    signingKey = await openpgp.decryptKey({ privateKey: signingKey, passphrase: options.passphrase });
  }
  const message = await openpgp.createMessage({ binary: new TextEncoder().encode(JSON.stringify(claim)) });
  return openpgp.sign({ message, signingKeys: signingKey, format: 'binary' });
}

/** Reads every public key in an armored keyring (one or several armor blocks, concatenated). */
export async function readKeyring(armored: string): Promise<openpgp.Key[]> {
  const blocks = armored.match(/-----BEGIN PGP PUBLIC KEY BLOCK-----[\s\S]*?-----END PGP PUBLIC KEY BLOCK-----/g) ?? [];
  if (blocks.length === 0) throw new SignatureError('BadKeyring', 'the keyring holds no armored public key (-----BEGIN PGP PUBLIC KEY BLOCK-----)');
  const keys: openpgp.Key[] = [];
  for (const block of blocks) {
    try {
      keys.push(...(await openpgp.readKeys({ armoredKeys: block })));
    } catch (err) {
      throw new SignatureError('BadKeyring', `the keyring holds an unreadable public key: ${(err as Error).message}`);
    }
  }
  return keys;
}

function describeKeys(keys: openpgp.Key[]): string {
  return keys.map((k) => `${k.getKeyID().toHex().toUpperCase()} (${k.getUserIDs().join(', ')})`).join('; ');
}

function checkClaim(data: Uint8Array, digest: string): SignatureClaim {
  let claim: SignatureClaim;
  try {
    claim = JSON.parse(new TextDecoder().decode(data)) as SignatureClaim;
  } catch {
    throw new SignatureError('Malformed', 'the signed content is not a JSON signature claim');
  }
  if (claim?.critical?.type !== SIGNATURE_TYPE) throw new SignatureError('Malformed', `the signed claim's critical.type is ${JSON.stringify(claim?.critical?.type)}, not "${SIGNATURE_TYPE}"`);
  const signed = claim.critical.image?.['docker-manifest-digest'];
  if (signed !== digest) throw new SignatureError('DigestMismatch', `the signature is for ${signed ?? 'no digest'}, not for ${digest}: it belongs to another payload or the payload was altered`);
  return claim;
}

/**
 * Verifies one signature over `digest` against a keyring. Returns the claim, or throws a
 * SignatureError naming what is wrong (malformed, key not trusted, bad signature, other digest).
 */
export async function verifyReleaseSignature(signature: Uint8Array, digest: string, keyring: openpgp.Key[]): Promise<VerifiedSignature> {
  if (!DIGEST_PATTERN.test(digest)) throw new SignatureError('Malformed', `${JSON.stringify(digest)} is not a sha256 digest`);
  if (signature.length === 0) throw new SignatureError('Missing', 'the signature is empty');
  const legacy = findV3Signature(signature);
  if (legacy) {
    const signer = verifyV3Signature(legacy, keyring);
    return { claim: checkClaim(legacy.data, digest), keyID: signer.keyID, signer: signer.userIDs };
  }
  let message: openpgp.Message<Uint8Array>;
  try {
    message = await openpgp.readMessage({ binaryMessage: signature });
  } catch (err) {
    throw new SignatureError('Malformed', `not an OpenPGP message: ${(err as Error).message}`);
  }
  const signingKeyIDs = message.getSigningKeyIDs().map((id) => id.toHex().toUpperCase());
  if (signingKeyIDs.length === 0) throw new SignatureError('Malformed', 'the OpenPGP message carries no signature');
  let result: Awaited<ReturnType<typeof openpgp.verify<Uint8Array>>>;
  try {
    result = await openpgp.verify({ message, verificationKeys: keyring, format: 'binary', expectSigned: true });
  } catch (err) {
    const text = (err as Error).message;
    if (/Could not find signing key/i.test(text)) throw new SignatureError('UntrustedKey', `signed by key ${signingKeyIDs.join(', ')}, which is not in the trusted keyring (${describeKeys(keyring)})`);
    throw new SignatureError('BadSignature', `the signature by ${signingKeyIDs.join(', ')} does not verify: the signed content was altered (${text})`);
  }
  const keyID = result.signatures[0].keyID.toHex().toUpperCase();
  const key = keyring.find((k) => k.getKeys(result.signatures[0].keyID).length > 0);
  return { claim: checkClaim(result.data, digest), keyID, signer: key?.getUserIDs() ?? [] };
}
