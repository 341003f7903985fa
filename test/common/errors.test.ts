// Every error class that a module in src exports is a BosunError with a stable, non-empty
// PascalCase reason and its own class name. The classes are found by importing every module
// (except the CLI's entry point, which runs the command line) and walking its exports, so a new
// error class that skips the base fails here until it extends it and has a sample below.
import { strict as assert } from 'node:assert';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { test } from 'node:test';
import { BosunError } from '../../src/common/errors.js';

const SRC = join(import.meta.dirname, '../../src');
// Programs, not modules: importing them runs them (the CLI; the echo workload's HTTP server).
const ENTRY_POINTS = new Set(['cli/main.ts', 'cluster/node-agent/echo.ts']);
// The console's page runs in the browser, apart from the server's code and its error base.
const BROWSER_CODE = 'console/web/';

function modules(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return modules(path);
    return name.endsWith('.ts') && !name.endsWith('.d.ts') ? [path] : [];
  });
}

type ErrorClass = new (...args: never[]) => Error;

async function exportedErrorClasses(): Promise<Map<string, { cls: ErrorClass; module: string }>> {
  const found = new Map<string, { cls: ErrorClass; module: string }>();
  for (const path of modules(SRC).sort()) {
    const module = relative(SRC, path);
    if (ENTRY_POINTS.has(module) || module.startsWith(BROWSER_CODE)) continue;
    const exports = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
    for (const value of Object.values(exports)) {
      if (typeof value === 'function' && value.prototype instanceof Error) found.set(value.name, { cls: value as ErrorClass, module });
    }
  }
  return found;
}

/** One instance of each error class, made as its module makes them. */
const samples: Record<string, (cls: ErrorClass) => Error> = {
  ApiError: (c) => new (c as unknown as new (code: number, reason: string, m: string) => Error)(404, 'NotFound', 'x'),
  KubeApiError: (c) => new (c as unknown as new (code: number, reason: string, m: string) => Error)(409, 'Conflict', 'x'),
  CloudError: (c) => new (c as unknown as new (status: number, code: string, m: string) => Error)(404, 'InstanceNotFound', 'x'),
  StorageError: (c) => new (c as unknown as new (code: string, m: string) => Error)('NotFound', 'x'),
  MigrationError: (c) => new (c as unknown as new (reason: string, m: string) => Error)('NoStore', 'x'),
  KubeadmError: (c) => new (c as unknown as new (reason: string, m: string) => Error)('Sample', 'x'),
  BackupError: (c) => new (c as unknown as new (reason: string, m: string) => Error)('Sample', 'x'),
  EtcdUnreachable: (c) => new (c as unknown as new (endpoint: string, m: string) => Error)('https://127.0.1.9:2379', 'x'),
  RenderError: (c) => new (c as unknown as new (reason: string, m: string) => Error)('NoMachineConfigs', 'x'),
  GraphWalkError: (c) => new (c as unknown as new (reason: string, m: string) => Error)('VersionNotFound', 'x'),
  RetrievalError: (c) => new (c as unknown as new (reason: string, m: string) => Error)('RemoteFailed', 'x'),
  SignatureError: (c) => new (c as unknown as new (reason: string, m: string) => Error)('BadSignature', 'x'),
  UpdateError: (c) => new (c as unknown as new (init: object) => Error)({ reason: 'ClusterOperatorDegraded', message: 'x', effect: 'fail' }),
  IgnitionConfigError: (c) => new (c as unknown as new (problems: object[]) => Error)([{ path: '', message: 'x', severity: 'error' }]),
  TranslationError: (c) => new (c as unknown as new (path: string, target: string, why: string) => Error)('storage', '3.1.0', 'x'),
  GraphDataError: (c) => new (c as unknown as new (file: string, m: string) => Error)('channels/stable-1.0.yaml', 'x'),
  PayloadInvalidError: (c) => new (c as unknown as new (source: string, problems: object[]) => Error)('dir', [{ file: 'f', message: 'x' }]),
  ResourceError: (c) => new (c as unknown as new (m: string, retriable: boolean) => Error)('x', true),
  QuantityError: (c) => new (c as unknown as new (input: unknown) => Error)('1Q'),
  InvalidCatalogError: (c) => new (c as unknown as new (problems: string[]) => Error)(['catalog.yaml#1: x']),
  BoundExceeded: (c) => new (c as unknown as new (what: string, ms: number) => Error)('the sample stop', 10_000),
  FitError: (c) => new (c as unknown as new (n: number, reasons: Map<string, string[]>) => Error)(0, new Map()),
};
/** The rest take a message alone. */
const fromMessage = (c: ErrorClass) => new (c as unknown as new (m: string) => Error)('x');

test('every error class exported from src extends BosunError and has a stable reason', async () => {
  const classes = await exportedErrorClasses();
  assert.ok(classes.size >= 23, `found only ${classes.size} error classes: ${[...classes.keys()].join(', ')}`);
  for (const [name, { cls, module }] of classes) {
    if (cls === BosunError) continue;
    assert.ok(cls.prototype instanceof BosunError, `${module}: ${name} does not extend BosunError`);
    const e = (samples[name] ?? fromMessage)(cls) as BosunError;
    assert.match(e.reason, /^[A-Z][A-Za-z0-9]*$/, `${module}: ${name} has reason ${JSON.stringify(e.reason)}`);
    assert.equal(e.name, name, `${module}: ${name}'s name`);
    assert.equal(e.message.length > 0, true, `${module}: ${name} has no message`);
  }
});

test('a BosunError keeps its reason, message and cause', () => {
  const cause = new Error('underneath');
  const e = new BosunError('SomethingFailed', 'something failed', { cause });
  assert.equal(e.reason, 'SomethingFailed');
  assert.equal(e.message, 'something failed');
  assert.equal(e.cause, cause);
  assert.equal(e.name, 'BosunError');
  assert.ok(e instanceof Error);
});

test('errors with a code read it as their reason', async () => {
  const { StorageError } = await import('../../src/apiserver/storage/types.js');
  const { CloudError } = await import('../../src/cloud/errors.js');
  const s = new StorageError('Conflict', 'x');
  assert.equal(s.code, 'Conflict');
  assert.equal(s.reason, 'Conflict');
  const c = new CloudError(404, 'InstanceNotFound', 'x');
  assert.equal(c.code, 'InstanceNotFound');
  assert.deepEqual(c.toJSON(), { error: { code: 'InstanceNotFound', message: 'x' } });
});
