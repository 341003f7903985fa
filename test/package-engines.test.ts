// Every installed package runs on every Node.js version bosun's `engines.node` declares: for each
// alternative of that range (`^20.19.0 || ^22.13.0 || >=24` is three), its lowest version must
// satisfy the `engines.node` of every package under node_modules. A dependency that moves on to a
// newer Node (cookie 2 needs Node 22, and fastify's light-my-request took it) fails here, instead
// of as an EBADENGINE warning at `npm ci` on a machine with the oldest Node bosun claims. And the
// cookie 1.x that package.json's `overrides` gives light-my-request still does its job.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import Fastify from 'fastify';

interface PackageJson { name?: string; version?: string; engines?: { node?: unknown } }

const readPackage = (dir: string): PackageJson => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;

/** Every package directory under a node_modules folder, scoped and nested ones included. */
function installedPackages(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(nodeModules, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const dir = join(nodeModules, entry.name);
    if (entry.name.startsWith('@')) {
      for (const scoped of readdirSync(dir, { withFileTypes: true })) {
        if (scoped.isDirectory()) found.push(join(dir, scoped.name), ...installedPackages(join(dir, scoped.name, 'node_modules')));
      }
    } else {
      found.push(dir, ...installedPackages(join(dir, 'node_modules')));
    }
  }
  return found.filter((dir) => existsSync(join(dir, 'package.json')));
}

/** The lowest version of each alternative (`||`) of a range: the oldest Node of each line it claims. */
function lowestOfEachAlternative(range: string): string[] {
  return new semver.Range(range).set.map((comparators) => {
    const lowest = semver.minVersion(new semver.Range(comparators.map((c) => c.value).join(' ')));
    assert.ok(lowest, `"${range}" has an alternative no version satisfies`);
    return lowest.version;
  });
}

const declared = readPackage('.').engines?.node;

test('package.json declares the Node.js versions bosun runs on, and this Node is one of them', () => {
  assert.equal(typeof declared, 'string');
  assert.ok(semver.validRange(declared as string), `engines.node "${String(declared)}" is not a valid range`);
  assert.ok(semver.satisfies(process.version, declared as string), `running on ${process.version}, outside engines.node "${String(declared)}"`);
});

test('every installed package supports the oldest Node.js of each line bosun declares', () => {
  const oldest = lowestOfEachAlternative(declared as string);
  const packages = installedPackages('node_modules');
  assert.ok(packages.length > 100, `only ${packages.length} packages under node_modules: run npm ci first`);
  const outside: string[] = [];
  for (const dir of packages) {
    const pkg = readPackage(dir);
    const needs = pkg.engines?.node;
    if (typeof needs !== 'string') continue;
    const excluded = oldest.filter((version) => !semver.satisfies(version, needs));
    if (excluded.length > 0) outside.push(`${pkg.name}@${pkg.version} (${dir}) needs node "${needs}": not ${excluded.join(', ')}`);
  }
  assert.deepEqual(outside, [], `bosun declares node "${String(declared)}", but:\n${outside.join('\n')}`);
});

test("light-my-request (fastify's inject) sends cookies with the cookie 1.x it is pinned to", async () => {
  const app = Fastify();
  app.get('/', async (request) => ({ cookie: request.headers.cookie }));
  try {
    const reply = await app.inject({ method: 'GET', url: '/', cookies: { session: 'a b', theme: 'dark' } });
    assert.deepEqual(reply.json(), { cookie: 'session=a%20b; theme=dark' });
  } finally {
    await app.close();
  }
});
