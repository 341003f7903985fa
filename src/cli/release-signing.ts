// `bosun release keygen|sign|verify`: make a signing key, sign a payload digest into a signature
// store, and check a signature against a keyring (OpenShift's own signatures included).
// These attach to the `release` command group that `bosun release build` also lives in.
import type { Command } from 'commander';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { releaseGroup } from './release.js';
import {
  DEFAULT_CREATOR,
  generateSigningKey,
  parsePullspec,
  readKeyring,
  signRelease,
  verifyReleaseSignature,
} from '../release/signature.js';
import { SignatureError } from '../release/signature-error.js';
import { readStoredSignatures, storeSignature } from '../release/signature-store.js';

function fail(message: string): never {
  console.error(`error: ${message}`);
  process.exit(1);
}

function readText(path: string, what: string): string {
  if (!existsSync(path)) fail(`${what} ${path} does not exist`);
  return readFileSync(path, 'utf8');
}

/** Adds keygen, sign and verify to an existing `release` command. */
export function registerReleaseSigning(release: Command): void {
  release
    .command('keygen')
    .description('generate an OpenPGP (RSA) key for signing releases')
    .requiredOption('--out <dir>', 'directory to write signing-key.asc (private, mode 0600) and signing-key.pub.asc (public) into')
    .option('--name <name>', 'the key\'s user ID', 'bosun release signing key')
    .option('--email <email>', 'an e-mail address for the user ID')
    .option('--bits <n>', 'RSA key size', '3072')
    .addHelpText('after', '\nThe public key goes into a verification ConfigMap (verifier-public-key-*) or any --keyring.')
    .action(async (opts: { out: string; name: string; email?: string; bits: string }) => {
      const bits = Number(opts.bits);
      if (![2048, 3072, 4096].includes(bits)) fail(`--bits must be 2048, 3072 or 4096, got ${opts.bits}`);
      const privatePath = join(opts.out, 'signing-key.asc');
      if (existsSync(privatePath)) fail(`${privatePath} already exists; refusing to overwrite a signing key`);
      const key = await generateSigningKey(opts.name, opts.email, bits);
      mkdirSync(opts.out, { recursive: true });
      writeFileSync(privatePath, key.privateKey, { mode: 0o600 });
      writeFileSync(join(opts.out, 'signing-key.pub.asc'), key.publicKey);
      console.log(`fingerprint ${key.fingerprint}`);
      console.log(`private key ${privatePath}`);
      console.log(`public key  ${join(opts.out, 'signing-key.pub.asc')}`);
    });

  release
    .command('sign')
    .description('sign a release payload by digest into a signature store (<dir>/sha256=<hex>/signature-<n>)')
    .argument('<pullspec>', 'the payload, by digest: bosun.local/release@sha256:<hex>')
    .requiredOption('--key <file>', 'armored private key (from `bosun release keygen`)')
    .requiredOption('--signatures <dir>', 'signature store directory')
    .option('--creator <text>', 'optional.creator in the claim', DEFAULT_CREATOR)
    .option('--passphrase-env <var>', 'environment variable holding the key\'s passphrase, if it has one')
    .action(async (pullspec: string, opts: { key: string; signatures: string; creator: string; passphraseEnv?: string }) => {
      try {
        const { digest } = parsePullspec(pullspec);
        const signature = await signRelease(pullspec, readText(opts.key, 'key file'), {
          creator: opts.creator,
          passphrase: opts.passphraseEnv ? process.env[opts.passphraseEnv] : undefined,
        });
        console.log(storeSignature(opts.signatures, digest, signature));
      } catch (err) {
        fail((err as Error).message);
      }
    });

  release
    .command('verify')
    .description('verify a release signature against a keyring of trusted public keys')
    .argument('<pullspec>', 'the payload, by digest: <repository>@sha256:<hex>')
    .option('--signature <file>', 'one signature file (signature-<n>)')
    .option('--signatures <dir>', 'a signature store; every signature-<n> of the digest is tried')
    .requiredOption('--keyring <file>', 'armored public key(s) to trust')
    .addHelpText('after', '\nExit 0 and the signed claim when a signature verifies; exit 1 naming the cause otherwise.')
    .action(async (pullspec: string, opts: { signature?: string; signatures?: string; keyring: string }) => {
      try {
        const { digest } = parsePullspec(pullspec);
        if (!opts.signature === !opts.signatures) fail('give exactly one of --signature FILE or --signatures DIR');
        const keyring = await readKeyring(readText(opts.keyring, 'keyring'));
        if (opts.signature && !existsSync(opts.signature)) throw new SignatureError('Missing', `signature file ${opts.signature} does not exist`);
        const candidates = opts.signature ? [new Uint8Array(readFileSync(opts.signature))] : readStoredSignatures(opts.signatures!, digest);
        if (candidates.length === 0) throw new SignatureError('Missing', `no signature for ${digest} in ${opts.signatures}`);
        let lastError: Error | undefined;
        for (const candidate of candidates) {
          try {
            const v = await verifyReleaseSignature(candidate, digest, keyring);
            console.log(`verified: ${digest}`);
            console.log(`signed by: ${v.keyID} ${v.signer.join(', ')}`);
            console.log(`reference: ${v.claim.critical.identity['docker-reference']}`);
            if (v.claim.optional?.creator) console.log(`creator:   ${v.claim.optional.creator}`);
            return;
          } catch (err) {
            lastError = err as Error;
          }
        }
        throw lastError!;
      } catch (err) {
        const reason = err instanceof SignatureError ? ` (${err.reason})` : '';
        fail(`signature rejected${reason}: ${(err as Error).message}`);
      }
    });
}

/** Registers the signing subcommands under `bosun release`. */
export function register(program: Command): void {
  registerReleaseSigning(releaseGroup(program));
}
