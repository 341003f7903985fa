// `bosun apiserver` as its own process for the benchmarks (and the tests that kill API servers),
// so that its CPU and memory are its own and the load generator does not share its event loop:
// started on a free loopback port over a data directory, resolved with its URL once it says it
// listens. `args` adds flags (--etcd-servers …). BENCH_CPU_PROF=<dir> profiles it (node
// --cpu-prof; the .cpuprofile is written into <dir> when it exits, for Chrome DevTools);
// BENCH_SERVER_FLAGS adds node flags (e.g. "--trace-gc", or "--import <preload.mjs>" to time
// something inside it), and BENCH_SERVER_STDOUT=<file> keeps what it prints there.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';

/** The server's process, with the URL it serves on. */
export type ApiServerProcess = ChildProcess & { url: string };

export async function startApiServerProcess(dataDir: string, args: string[] = []): Promise<ApiServerProcess> {
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const flags = process.env.BENCH_SERVER_FLAGS?.split(' ').filter(Boolean) ?? [];
  const server = spawn(process.execPath, [...profile, ...flags, new URL('../../bin/bosun.js', import.meta.url).pathname, 'apiserver', '--data-dir', dataDir, '--listen', '127.0.0.1:0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BOSUN_LOG_LEVEL: 'warn' },
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (d) => {
      out += d;
      const m = /API server listening on (https:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    server.once('exit', () => reject(new Error(`the API server exited: ${out}`)));
  });
  // Keep reading, so that a full pipe never blocks the server.
  if (process.env.BENCH_SERVER_STDOUT) server.stdout!.pipe(createWriteStream(process.env.BENCH_SERVER_STDOUT));
  else server.stdout!.resume();
  return Object.assign(server, { url });
}
