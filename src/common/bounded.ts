// Waiting with a bound that names what was waited for: a stop that never finishes (a process that
// does not exit, a server whose close waits on a connection, a loop that missed its abort) must
// not hold the whole shutdown, and whoever reads the log must see which wait gave up.
//
//   await bounded(server.close(), 10_000, 'the API server closing its connections');
//   // → rejects with BoundExceeded("the API server closing its connections did not finish within 10 s")
import { BosunError } from './errors.js';

/** A wait given up on at its bound; `what` says what was waited for. */
export class BoundExceeded extends BosunError {
  constructor(readonly what: string, readonly ms: number) {
    super('BoundExceeded', `${what} did not finish within ${formatMs(ms)}`);
  }
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/**
 * `work`'s outcome, or a BoundExceeded rejection once `ms` have passed without one. The timer
 * keeps the process alive until then (a wait on a promise nothing will settle must still end in
 * the error, not in an exit mid-shutdown); `work` itself goes on (nothing can cancel a promise) —
 * the caller says in its log what it left behind.
 */
export function bounded<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new BoundExceeded(what, ms)), ms);
    work.then(
      (value) => { clearTimeout(timer); resolve(value); },
      (e: unknown) => { clearTimeout(timer); reject(e); },
    );
  });
}
