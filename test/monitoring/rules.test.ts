// The payload's alert and recording rules (every PrometheusRule manifest), written out as the
// monitoring operator writes them (rule-files.ts), checked with Debian's `promtool check rules`
// and unit-tested with `promtool test rules` (test/monitoring/rules/*.test.yaml). Without
// /usr/bin/promtool the tests are skipped, except under CI=true, where they fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type * as api from '../../src/api/index.js';
import { renderSource } from '../../src/cvo/payload/build.js';
import { durationMs, ruleFiles } from '../../src/monitoring/rule-files.js';

const PROMTOOL = process.env.PROMTOOL ?? '/usr/bin/promtool';
const MANIFESTS = new URL('../../release-payload/manifests/', import.meta.url).pathname;
const TESTS = new URL('./rules/', import.meta.url).pathname;
const skip = !existsSync(PROMTOOL) && process.env.CI !== 'true' ? `${PROMTOOL} is not installed (apt-get install prometheus)` : false;

function payloadRules(): api.PrometheusRule[] {
  const out: api.PrometheusRule[] = [];
  for (const file of readdirSync(MANIFESTS).filter((f) => f.endsWith('.yaml')).sort()) {
    // As a release build renders them: upstream's escapes ({{ "{{ $labels.name }}" }}) become Prometheus's templates.
    for (const doc of parseAllDocuments(renderSource(file, readFileSync(join(MANIFESTS, file), 'utf8'), '1.0.0'))) {
      const o = doc.toJS() as api.PrometheusRule | null;
      if (o?.kind === 'PrometheusRule') out.push(o);
    }
  }
  return out;
}

test('the payload ships PrometheusRules for the CVO, the MCO, the API server and Watchdog', () => {
  const alerts = new Set(payloadRules().flatMap((r) => (r.spec?.groups ?? []).flatMap((g) => (g.rules ?? []).map((x) => x.alert).filter(Boolean))));
  for (const name of ['ClusterOperatorDown', 'ClusterOperatorDegraded', 'ClusterOperatorFlapping', 'ClusterVersionOperatorDown', 'CannotRetrieveUpdates', 'UpdateAvailable', 'ClusterNotUpgradeable',
    'MCDRebootError', 'MCDPivotError', 'MCCDrainError', 'MCCPoolAlert', 'KubeletHealthState', 'KubeAPIErrorBudgetBurn', 'Watchdog']) {
    assert.ok(alerts.has(name), `no alert ${name}`);
  }
});

test('release rendering turns the escaped templates into Prometheus\'s and refuses bare ones', () => {
  const down = payloadRules().flatMap((r) => r.spec?.groups ?? []).flatMap((g) => g.rules ?? []).find((r) => r.alert === 'ClusterOperatorDown');
  assert.match(down?.annotations?.description ?? '', /^The \{\{ \$labels\.name \}\} operator may be down .*'\{\{ if eq \$labels\.name "version" \}\}bosun adm upgrade\{\{ else \}\}/);
  assert.throws(() => renderSource('x.yaml', 'description: {{ $labels.name }}', '1.0.0'), /x\.yaml: unknown placeholder \{\{ \$labels\.name \}\}/);
});

test('promtool check rules and promtool test rules pass on the payload\'s rules', { skip, timeout: 120_000 }, () => {
  assert.ok(existsSync(PROMTOOL), `${PROMTOOL} is missing (CI=true needs it: apt-get install prometheus)`);
  const dir = mkdtempSync(join(tmpdir(), 'bosun-rules-'));
  try {
    const files = ruleFiles(payloadRules());
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    const check = spawnSync(PROMTOOL, ['check', 'rules', ...Object.keys(files).map((f) => join(dir, f))], { encoding: 'utf8' });
    assert.equal(check.status, 0, `promtool check rules:\n${check.stdout}\n${check.stderr}`);
    const tests = readdirSync(TESTS).filter((f) => f.endsWith('.test.yaml')).sort();
    assert.ok(tests.length >= 4);
    for (const t of tests) copyFileSync(join(TESTS, t), join(dir, t));
    const run = spawnSync(PROMTOOL, ['test', 'rules', ...tests], { cwd: dir, encoding: 'utf8' });
    assert.equal(run.status, 0, `promtool test rules:\n${run.stdout}\n${run.stderr}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('--alert-for-override shortens every longer for: and the rules still pass promtool', { skip }, () => {
  const files = ruleFiles(payloadRules(), { forOverride: '10s' });
  const fors = Object.values(files).flatMap((text) => [...text.matchAll(/^\s+for: (\S+)$/gm)].map((m) => m[1]));
  assert.ok(fors.length > 5);
  for (const f of fors) assert.ok((durationMs(f) ?? Infinity) <= 10_000, `for: ${f} left`);
  const dir = mkdtempSync(join(tmpdir(), 'bosun-rules-'));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
    execFileSync(PROMTOOL, ['check', 'rules', ...Object.keys(files).map((f) => join(dir, f))], { encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.throws(() => ruleFiles(payloadRules(), { forOverride: 'soon' }), /not a Prometheus duration/);
});
