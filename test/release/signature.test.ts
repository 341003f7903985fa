// Release signatures: a good signature verifies; wrong key, tampered content, another digest,
// garbage and missing signatures are refused with their reason; Red Hat's real signature of
// OpenShift 4.10.18 verifies with Red Hat's published key; the CLI does the same.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildClaim,
  generateSigningKey,
  parsePullspec,
  readKeyring,
  signRelease,
  verifyReleaseSignature,
  type SigningKey,
} from '../../src/release/signature.js';
import { SignatureError } from '../../src/release/signature-error.js';
import { readStoredSignatures, storeSignature } from '../../src/release/signature-store.js';
import { runBosun } from '../helpers/cli.js';

const FIXTURES = 'test/fixtures/release-signatures';
const REDHAT_DIGEST = 'sha256:195de2a5ef3af1083620a62a45ea61ac1233ffa27bbce7b30609a69775aeca19';
const DIGEST = `sha256:${'ab'.repeat(32)}`;
const PULLSPEC = `bosun.local/release@${DIGEST}`;

let dir: string;
let key: SigningKey;
let other: SigningKey;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bosun-sig-'));
  [key, other] = await Promise.all([generateSigningKey('bosun test', 'test@bosun.local', 2048), generateSigningKey('someone else', undefined, 2048)]);
});
after(() => rmSync(dir, { recursive: true, force: true }));

async function rejects(p: Promise<unknown>, reason: string, pattern: RegExp): Promise<void> {
  await assert.rejects(p, (e: Error) => e instanceof SignatureError && e.reason === reason && pattern.test(e.message), `${reason} ${pattern}`);
}

test('signature: a signed claim verifies and carries the atomic container signature fields', async () => {
  const sig = await signRelease(PULLSPEC, key.privateKey, { creator: 'test', timestamp: 1700000000 });
  const v = await verifyReleaseSignature(sig, DIGEST, await readKeyring(key.publicKey));
  assert.deepEqual(v.claim, buildClaim(PULLSPEC, 'test', 1700000000));
  assert.equal(v.claim.critical.type, 'atomic container signature');
  assert.equal(v.claim.critical.image['docker-manifest-digest'], DIGEST);
  assert.equal(v.claim.critical.identity['docker-reference'], PULLSPEC);
  assert.deepEqual(v.signer, ['bosun test <test@bosun.local>']);
  // A signed message, not a detached signature: the claim is inside.
  assert.ok(Buffer.from(sig).length > 0);
});

test('signature: a keyring with several keys accepts the one that signed', async () => {
  const sig = await signRelease(PULLSPEC, key.privateKey);
  const ring = await readKeyring(`${other.publicKey}\n${key.publicKey}\n${readFileSync(`${FIXTURES}/redhat-release-key-2.asc`, 'utf8')}`);
  assert.equal(ring.length, 3);
  assert.equal((await verifyReleaseSignature(sig, DIGEST, ring)).signer[0], 'bosun test <test@bosun.local>');
});

test('signature: wrong key, tampered content, other digest, garbage and empty are refused', async () => {
  const sig = await signRelease(PULLSPEC, key.privateKey);
  const trusted = await readKeyring(key.publicKey);
  await rejects(verifyReleaseSignature(sig, DIGEST, await readKeyring(other.publicKey)), 'UntrustedKey', /not in the trusted keyring/);
  await rejects(verifyReleaseSignature(sig, `sha256:${'cd'.repeat(32)}`, trusted), 'DigestMismatch', /is for sha256:abab.*not for sha256:cdcd/);
  const tampered = Buffer.from(sig);
  const at = tampered.indexOf(Buffer.from('abab')); // inside the literal claim
  assert.ok(at > 0);
  tampered[at] = 'c'.charCodeAt(0);
  await rejects(verifyReleaseSignature(tampered, DIGEST, trusted), 'BadSignature', /does not verify/);
  await rejects(verifyReleaseSignature(new TextEncoder().encode('not a signature'), DIGEST, trusted), 'Malformed', /OpenPGP|signature/);
  await rejects(verifyReleaseSignature(new Uint8Array(), DIGEST, trusted), 'Missing', /empty/);
  await assert.rejects(readKeyring('nothing armored here'), (e: Error) => e instanceof SignatureError && e.reason === 'BadKeyring');
  assert.throws(() => parsePullspec('bosun.local/release:1.0.0'), /not a pullspec by digest/);
});

test('signature: Red Hat\'s real OpenShift 4.10.18 signature verifies with Red Hat\'s release key', async () => {
  const ring = await readKeyring(readFileSync(`${FIXTURES}/redhat-release-key-2.asc`, 'utf8'));
  const sig = readFileSync(`${FIXTURES}/${REDHAT_DIGEST.replace(':', '=')}/signature-1`);
  const v = await verifyReleaseSignature(sig, REDHAT_DIGEST, ring);
  assert.equal(v.keyID, '199E2F91FD431D51');
  assert.match(v.signer[0], /Red Hat, Inc\. \(release key 2\)/);
  assert.equal(v.claim.critical.identity['docker-reference'], 'quay.io/openshift-release-dev/ocp-release:4.10.18-x86_64');
  assert.equal(v.claim.optional?.creator, 'Red Hat OpenShift Signing Authority 0.0.1');
  // The same signature with a flipped byte in the RSA value, another digest, or another key fails.
  const bad = Buffer.from(sig);
  bad[bad.length - 10] ^= 0xff;
  await assert.rejects(verifyReleaseSignature(bad, REDHAT_DIGEST, ring), SignatureError);
  await rejects(verifyReleaseSignature(sig, DIGEST, ring), 'DigestMismatch', /not for/);
  await rejects(verifyReleaseSignature(sig, REDHAT_DIGEST, await readKeyring(key.publicKey)), 'UntrustedKey', /199E2F91FD431D51/);
});

test('signature store: signatures are stored as sha256=<hex>/signature-<n> in order', async () => {
  const store = join(dir, 'store');
  const first = storeSignature(store, DIGEST, new Uint8Array([1]));
  const second = storeSignature(store, DIGEST, new Uint8Array([2]));
  assert.equal(first, join(store, `sha256=${'ab'.repeat(32)}`, 'signature-1'));
  assert.equal(second, join(store, `sha256=${'ab'.repeat(32)}`, 'signature-2'));
  assert.deepEqual(readStoredSignatures(store, DIGEST).map((s) => s[0]), [1, 2]);
  assert.deepEqual(readStoredSignatures(store, `sha256:${'00'.repeat(32)}`), []);
});

test('cli: release keygen, sign and verify', async () => {
  const keys = join(dir, 'keys');
  const sigs = join(dir, 'sigs');
  const gen = await runBosun(['release', 'keygen', '--out', keys, '--name', 'cli test', '--bits', '2048']);
  assert.equal(gen.code, 0, gen.stderr);
  assert.match(gen.stdout, /fingerprint [0-9A-F]{40}/);
  assert.ok(existsSync(join(keys, 'signing-key.asc')));
  const again = await runBosun(['release', 'keygen', '--out', keys, '--bits', '2048']);
  assert.notEqual(again.code, 0);
  assert.match(again.stderr, /refusing to overwrite/);

  const sign = await runBosun(['release', 'sign', PULLSPEC, '--key', join(keys, 'signing-key.asc'), '--signatures', sigs]);
  assert.equal(sign.code, 0, sign.stderr);
  const sigFile = sign.stdout.trim();
  assert.equal(sigFile, join(sigs, `sha256=${'ab'.repeat(32)}`, 'signature-1'));

  const ok = await runBosun(['release', 'verify', PULLSPEC, '--signature', sigFile, '--keyring', join(keys, 'signing-key.pub.asc')]);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /verified: sha256:abab[\s\S]*signed by: [0-9A-F]{16} cli test/);
  const viaStore = await runBosun(['release', 'verify', PULLSPEC, '--signatures', sigs, '--keyring', join(keys, 'signing-key.pub.asc')]);
  assert.equal(viaStore.code, 0, viaStore.stderr);

  writeFileSync(join(dir, 'redhat.asc'), readFileSync(`${FIXTURES}/redhat-release-key-2.asc`));
  const wrong = await runBosun(['release', 'verify', PULLSPEC, '--signature', sigFile, '--keyring', join(dir, 'redhat.asc')]);
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /signature rejected \(UntrustedKey\)/);
  const missing = await runBosun(['release', 'verify', PULLSPEC, '--signature', join(dir, 'nope'), '--keyring', join(dir, 'redhat.asc')]);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /\(Missing\).*does not exist/);

  const redhat = await runBosun([
    'release', 'verify', `quay.io/openshift-release-dev/ocp-release@${REDHAT_DIGEST}`,
    '--signatures', FIXTURES, '--keyring', join(dir, 'redhat.asc'),
  ]);
  assert.equal(redhat.code, 0, redhat.stderr);
  assert.match(redhat.stdout, /signed by: 199E2F91FD431D51 Red Hat, Inc\. \(release key 2\)/);
});
