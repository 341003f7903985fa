// The WAL's checkpoints on a thread of their own. SQLite copies the write-ahead log back into the
// database file (a checkpoint) whenever a commit leaves the log past 1,000 pages: 4 MB written and
// the database file fsynced, inside that commit, on the event loop. At 1,000 Lease renewals a
// second that was five stalls of 10–15 ms every second, each one delaying every request behind it
// (bench:nodes). Here a worker thread holds a second connection and runs a PASSIVE checkpoint every
// CHECKPOINT_EVERY_MS: it never waits for, nor blocks, the writer (WAL mode lets a checkpoint run
// beside a write transaction), and the writer starts the log over once a checkpoint has copied all
// of it. The store's own connection checkpoints automatically until the thread says it is ready,
// and again if the thread fails, so the log never grows without bound. Durability is untouched:
// a commit is durable once its WAL frames are fsynced, before and after this change; a checkpoint
// only moves committed pages, and fsyncs the database file before the log is reused.
//
// Starting over needs a checkpoint that copied every frame: under a steady stream of writes some
// commit always lands while the thread's checkpoint runs, so the log was never started over and
// grew for as long as the writes went on (150 MB in 30 s of bench:apiserver's creates), and every
// commit that extended the file paid for it in its fsync (a batch of 8 creates: ~450 µs against
// ~250 µs in a log being reused). So the thread reports each checkpoint (`onCheckpoint`: the log's
// frames and how many are copied), and the store finishes a large one itself between two commits
// (sqlite.ts): only the frames written meanwhile are left, a stall of 1–3 ms, and its next commit
// starts the log over.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

const CHECKPOINT_EVERY_MS = 100;

const WORKER_SOURCE = `(() => {
const { parentPort, workerData } = require('node:worker_threads');
let db;
try {
  const Database = require(workerData.module);
  db = new Database(workerData.path, { fileMustExist: true });
  db.pragma('synchronous = FULL');
} catch (e) {
  // Said as a message: better-sqlite3's errors do not survive the copy between threads.
  parentPort.postMessage({ error: String(e && e.message || e) });
  parentPort.close();
  return;
}
const timer = setInterval(() => {
  try {
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    parentPort.postMessage({ log: result.log, checkpointed: result.checkpointed });
  } catch (e) {
    clearInterval(timer);
    parentPort.postMessage({ error: String(e && e.message || e) });
  }
}, workerData.everyMs);
parentPort.on('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
parentPort.postMessage({ ready: true });
})();
`;

export interface Checkpointer {
  /** Stops the thread and closes its connection (before the store closes its own). */
  stop(): Promise<void>;
}

/** What one of the thread's checkpoints found: the frames in the log, and how many are now in the database file. */
export interface CheckpointResult {
  log: number;
  checkpointed: number;
}

/**
 * Starts the checkpoint thread for the database at `path`. `onReady` is called once it runs (the
 * store then turns its own automatic checkpoints off); `onFailure` if it fails (turn them back on);
 * `onCheckpoint` after each of its checkpoints.
 */
export function startCheckpointer(
  path: string,
  onReady: () => void,
  onFailure: (message: string) => void,
  onCheckpoint: (result: CheckpointResult) => void = () => {},
): Checkpointer {
  const module = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { path, module, everyMs: CHECKPOINT_EVERY_MS } });
  let failed = false;
  let stopping = false;
  const fail = (message: string) => {
    if (failed) return;
    failed = true;
    onFailure(message);
  };
  worker.on('message', (m: { ready?: boolean; error?: string; log?: number; checkpointed?: number }) => {
    if (m.ready && !stopping) {
      // Running: from now on it does not keep the process alive by itself (until stop()).
      worker.unref();
      onReady();
    } else if (m.error) fail(m.error);
    else if (m.log !== undefined && !stopping) onCheckpoint({ log: m.log, checkpointed: m.checkpointed ?? 0 });
  });
  // An error thrown in the thread arrives cloned: an Error, or an object with its message.
  worker.on('error', (e: unknown) => fail(typeof (e as { message?: unknown })?.message === 'string' ? (e as { message: string }).message : String(e)));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.once('exit', (code) => {
    if (code !== 0) fail(`the checkpoint thread exited with code ${code}`);
  });
  return {
    async stop() {
      failed = true; // a stop is no failure
      stopping = true;
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
