// ServiceAccount tokens: key persistence, claims, expiration bounds, and every way a token is refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { authenticateToken, issueToken, loadOrCreateSigningKeys, TokenRequestError } from '../../src/apiserver/auth/serviceaccount-tokens.js';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bosun-tokens-'));
test.after(() => fs.rmSync(dir, { recursive: true, force: true }));
const keys = loadOrCreateSigningKeys(dir);
const sa = { namespace: 'kube-system', name: 'ccm', uid: 'uid-1' };
const lookup = (ns: string, name: string) => (ns === 'kube-system' && name === 'ccm' ? { uid: 'uid-1' } : undefined);

test('the signing key is created once and reloaded from the data directory', () => {
  const again = loadOrCreateSigningKeys(dir);
  assert.equal(fs.statSync(path.join(dir, 'sa.key')).mode & 0o777, 0o600);
  const t = issueToken(keys, sa, {});
  assert.equal(authenticateToken(again, t.token, { lookupServiceAccount: lookup }).ok, true);
});

test('tokens carry Kubernetes claims and authenticate as the service account', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const t = issueToken(keys, sa, {}, { now });
  assert.equal(t.expirationSeconds, 3600);
  assert.equal(t.expirationTimestamp, '2026-01-01T01:00:00Z');
  const claims = JSON.parse(Buffer.from(t.token.split('.')[1], 'base64url').toString());
  assert.equal(claims.sub, 'system:serviceaccount:kube-system:ccm');
  assert.deepEqual(claims['kubernetes.io'], { namespace: 'kube-system', serviceaccount: { name: 'ccm', uid: 'uid-1' } });
  assert.equal(claims.exp - claims.iat, 3600);
  assert.equal(claims.nbf, claims.iat);
  const r = authenticateToken(keys, t.token, { lookupServiceAccount: lookup, now });
  assert.ok(r.ok);
  assert.deepEqual(r.user.groups, ['system:serviceaccounts', 'system:serviceaccounts:kube-system', 'system:authenticated']);
  assert.equal(r.user.name, 'system:serviceaccount:kube-system:ccm');
});

test('expirationSeconds below 10 minutes is refused', () => {
  assert.throws(() => issueToken(keys, sa, { expirationSeconds: 599 }), TokenRequestError);
  assert.equal(issueToken(keys, sa, { expirationSeconds: 600 }).expirationSeconds, 600);
});

test('tampered, expired, foreign, deleted or recreated-account tokens are refused with a reason', () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const good = issueToken(keys, sa, { expirationSeconds: 600 }, { now }).token;
  const [h, p, s] = good.split('.');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
  const tamperedPayload = Buffer.from(JSON.stringify({ ...claims, sub: 'system:serviceaccount:kube-system:admin' })).toString('base64url');
  const otherKeys = loadOrCreateSigningKeys(fs.mkdtempSync(path.join(dir, 'other-')));
  const table: [string, string, Parameters<typeof authenticateToken>[2], RegExp][] = [
    ['tampered payload', `${h}.${tamperedPayload}.${s}`, { lookupServiceAccount: lookup, now }, /invalid signature/],
    ['flipped signature', `${h}.${p}.${s.slice(0, -4)}AAAA`, { lookupServiceAccount: lookup, now }, /invalid signature/],
    ['another key', issueToken(otherKeys, sa, {}, { now }).token, { lookupServiceAccount: lookup, now }, /invalid signature/],
    ['expired', good, { lookupServiceAccount: lookup, now: new Date(now.getTime() + 3600_000) }, /expired/],
    ['wrong issuer', good, { lookupServiceAccount: lookup, now, issuer: 'https://elsewhere' }, /issuer/],
    ['wrong audience', good, { lookupServiceAccount: lookup, now, audiences: ['vault'] }, /audiences/],
    ['account deleted', good, { lookupServiceAccount: () => undefined, now }, /deleted/],
    ['account recreated', good, { lookupServiceAccount: () => ({ uid: 'uid-2' }), now }, /UID/],
    ['not a JWT', 'abc', { lookupServiceAccount: lookup, now }, /not a JWT/],
  ];
  for (const [what, token, opts, reason] of table) {
    const r = authenticateToken(keys, token, opts);
    assert.equal(r.ok, false, what);
    if (!r.ok) assert.match(r.reason, reason, what);
  }
});
