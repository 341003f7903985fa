// A bosun component command run as a process for the CLI tests: its output collected, its
// endpoints fetched, and a clean stop on SIGTERM awaited.
import { spawn, type ChildProcess } from 'node:child_process';
import { bosunBin } from '../helpers/cli.js';
import { eventually } from '../helpers/eventually.js';

export interface ComponentProcess {
  child: ChildProcess;
  output(): string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export function startComponent(args: string[], env: NodeJS.ProcessEnv = {}): ComponentProcess {
  const child = spawn(process.execPath, [bosunBin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return {
    child,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** GET http://address/path once it answers with `status` (the process may still be starting). */
export function fetchWhen(address: string, path: string, status = 200, timeoutMs = 20_000): Promise<string> {
  return eventually(`${path} on ${address} to answer ${status}`, async () => {
    const res = await fetch(`http://${address}${path}`);
    const text = await res.text();
    return res.status === status ? text : undefined;
  }, timeoutMs);
}
