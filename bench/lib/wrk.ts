// Debian's `wrk` as a load generator (C and epoll: a few µs of CPU per request, where a Node client
// spends a hundred or more on the same cores as what it measures), for the benchmarks that use it
// when it is installed: bench:lb, and bench:apiserver's paired rounds of creates.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/** CPU ticks per second in /proc (USER_HZ). */
const HZ = 100;

/** What wrk reports: requests answered 2xx in `seconds`, its latencies (ms), and its own CPU (ms). */
export interface WrkResult {
  requests: number;
  /** Socket errors and answers other than 2xx/3xx. */
  errors: number;
  seconds: number;
  p50: number;
  p99: number;
  cpuMs: number;
}

export function wrkBinary(): string | undefined {
  for (const p of ['/usr/bin/wrk', '/usr/local/bin/wrk']) if (existsSync(p)) return p;
  return undefined;
}

/** A wrk latency (`812.00us`, `1.23ms`, `2.00s`) in ms. */
function wrkMs(v: string): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(v);
  if (!m) return NaN;
  return Number(m[1]) * { us: 0.001, ms: 1, s: 1000, m: 60_000 }[m[2] as 'us' | 'ms' | 's' | 'm'];
}

/** wrk's report (with --latency), followed by the line of /proc/<its shell>/stat whose cutime/cstime are wrk's CPU. */
export function parseWrk(out: string): WrkResult {
  const num = (re: RegExp) => Number(re.exec(out)?.[1] ?? NaN);
  const done = /(\d+) requests in ([\d.]+)(us|ms|s|m),/.exec(out);
  if (!done) throw new Error(`unexpected wrk output: ${out}`);
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  const non2xx = num(/Non-2xx or 3xx responses: (\d+)/);
  const errors = (socketErrors ? socketErrors.slice(1).reduce((a, b) => a + Number(b), 0) : 0) + (Number.isNaN(non2xx) ? 0 : non2xx);
  const stat = out.trim().split('\n').pop()!;
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields[13], [14]: cutime and cstime, the CPU of the shell's reaped children: wrk alone.
  const cpuMs = (Number(fields[13]) + Number(fields[14])) * (1000 / HZ);
  return {
    requests: Number(done[1]) - (Number.isNaN(non2xx) ? 0 : non2xx),
    errors,
    seconds: wrkMs(`${done[2]}${done[3]}`) / 1000,
    p50: wrkMs(/^\s+50%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    p99: wrkMs(/^\s+99%\s+(\S+)/m.exec(out)?.[1] ?? ''),
    cpuMs,
  };
}

/**
 * Starts wrk with `args` (its options and URL; add --latency for the percentiles) through a shell
 * that prints its own /proc stat after wrk, so that wrk's CPU is known. `onStart` runs as it is
 * spawned (to sample other processes' CPU from then).
 */
export function runWrk(args: string[], onStart: () => void = () => {}): Promise<{ result: WrkResult; output: string }> {
  return new Promise((resolve, reject) => {
    const c = spawn('/bin/sh', ['-c', '"$0" "$@"; s=$?; cat /proc/$$/stat; exit $s', wrkBinary()!, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    onStart();
    let out = '';
    c.stdout!.on('data', (d) => (out += d));
    // 'close', not 'exit': its output read to the end.
    c.on('close', (code) => {
      if (code !== 0) return reject(new Error(`wrk exited ${code}: ${out}`));
      try {
        resolve({ result: parseWrk(out), output: out });
      } catch (e) {
        reject(e as Error);
      }
    });
  });
}
