// The task-graph runner: the worker limit, failures blocking only their dependents, serial
// tasks inside a node, and the incomplete-nodes report when cancelled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildTaskGraph, type GraphMode, type Task } from '../../src/cvo/task-graph.js';
import { runTaskGraph } from '../../src/cvo/task-graph-runner.js';
import { manifest } from './helpers.js';

const tick = (ms = 2): Promise<void> => new Promise((r) => setTimeout(r, ms));
const graphOf = (files: string[], mode: GraphMode) => buildTaskGraph(files.map((f) => manifest(f)), mode);
const fileOf = (t: Task): string => t.manifest.file.replace(/\.yaml$/, '');

test('never runs more nodes at once than the worker limit, and uses all of it', async () => {
  const g = graphOf(['0000_10_a_1.yaml', '0000_10_b_1.yaml', '0000_10_c_1.yaml', '0000_10_d_1.yaml', '0000_10_e_1.yaml', '0000_10_f_1.yaml'], 'Initializing');
  let running = 0;
  let peak = 0;
  const result = await runTaskGraph(g, 2, async () => {
    running++;
    peak = Math.max(peak, running);
    await tick(5);
    running--;
  });
  assert.equal(peak, 2);
  assert.equal(result.succeeded, 6);
  assert.deepEqual(result.errors, []);
});

test('levels run strictly in order under Updating', async () => {
  const g = graphOf(['0000_10_a_1.yaml', '0000_10_b_1.yaml', '0000_20_c_1.yaml', '0000_20_d_1.yaml', '0000_30_e_1.yaml'], 'Updating');
  const log: string[] = [];
  await runTaskGraph(g, 16, async (tasks) => {
    log.push(`start ${fileOf(tasks[0])}`);
    await tick(fileOf(tasks[0]).includes('_a_') ? 10 : 1);
    log.push(`end ${fileOf(tasks[0])}`);
  });
  const at = (s: string): number => log.indexOf(s);
  assert.ok(at('end 0000_10_a_1') < at('start 0000_20_c_1'));
  assert.ok(at('end 0000_10_b_1') < at('start 0000_20_d_1'));
  assert.ok(Math.max(at('end 0000_20_c_1'), at('end 0000_20_d_1')) < at('start 0000_30_e_1'));
  assert.ok(at('start 0000_10_b_1') < at('end 0000_10_a_1'), 'components of one level run in parallel');
});

test('a failing node blocks only its dependents; its siblings still run', async () => {
  const g = graphOf(['0000_10_a_1.yaml', '0000_10_b_1.yaml', '0000_20_c_1.yaml'], 'Updating');
  const ran: string[] = [];
  const result = await runTaskGraph(g, 4, async (tasks) => {
    ran.push(fileOf(tasks[0]));
    if (fileOf(tasks[0]) === '0000_10_a_1') throw new Error('a is broken');
  });
  assert.deepEqual(ran.sort(), ['0000_10_a_1', '0000_10_b_1']);
  assert.deepEqual(result.errors.map((e) => e.message), ['a is broken']);
  assert.equal(result.failed, 1);
  assert.equal(result.incomplete, 1);
  assert.equal(fileOf(result.firstIncomplete!), '0000_20_c_1');
});

test('under Initializing a failure leaves every other component running', async () => {
  const g = graphOf(['0000_10_a_1.yaml', '0000_20_b_1.yaml', '0000_30_c_1.yaml'], 'Initializing');
  const ran: string[] = [];
  const result = await runTaskGraph(g, 1, async (tasks) => {
    ran.push(fileOf(tasks[0]));
    if (fileOf(tasks[0]) === '0000_10_a_1') throw new Error('not yet');
  });
  assert.deepEqual(ran, ['0000_10_a_1', '0000_20_b_1', '0000_30_c_1']);
  assert.equal(result.incomplete, 0);
  assert.equal(result.succeeded, 2);
});

test('a node hands its tasks to one worker call, in order', async () => {
  const g = graphOf(['0000_10_a_1.yaml', '0000_10_a_2.yaml', '0000_10_a_3.yaml'], 'Updating');
  const calls: string[][] = [];
  await runTaskGraph(g, 4, async (tasks) => {
    calls.push(tasks.map(fileOf));
  });
  assert.deepEqual(calls, [['0000_10_a_1', '0000_10_a_2', '0000_10_a_3']]);
});

test('cancelling reports "N incomplete task nodes, beginning with …"', async () => {
  const g = graphOf(['0000_10_a_1.yaml', '0000_20_b_1.yaml', '0000_30_c_1.yaml'], 'Updating');
  const abort = new AbortController();
  const result = await runTaskGraph(
    g,
    2,
    async () => {
      abort.abort();
    },
    abort.signal,
  );
  assert.equal(result.succeeded, 1);
  assert.equal(result.incomplete, 2);
  assert.deepEqual(result.errors.map((e) => e.message), ['2 incomplete task nodes, beginning with configmap "0000-20-b-1" (2 of 3)']);
});
