// `bosun apiserver` as its own process for the benchmarks, so that its CPU and memory are its own
// and the load generator does not share its event loop: started on a random loopback port over a
// data directory, resolved once it says it listens. BENCH_CPU_PROF=<dir> profiles it (node
// --cpu-prof; the .cpuprofile is written into <dir> when it exits, for Chrome DevTools).
import { spawn, type ChildProcess } from 'node:child_process';

export async function startApiServerProcess(dataDir: string): Promise<ChildProcess> {
  const port = 30000 + Math.floor(Math.random() * 20000);
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const server = spawn(process.execPath, [...profile, new URL('../../bin/bosun.js', import.meta.url).pathname, 'apiserver', '--data-dir', dataDir, '--listen', `127.0.0.1:${port}`], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BOSUN_LOG_LEVEL: 'warn' },
  });
  await new Promise<void>((resolve, reject) => {
    let out = '';
    server.stdout!.on('data', (d) => {
      out += d;
      if (out.includes('API server listening')) resolve();
    });
    server.once('exit', () => reject(new Error(`the API server exited: ${out}`)));
  });
  return server;
}
