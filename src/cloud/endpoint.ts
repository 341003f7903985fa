// Where a running local cloud can be found: `<data-dir>/cloud/endpoint.json` ({url, pid}), written
// atomically by the service once it listens and removed when it stops, so that clients given only
// the data directory (`bosun cloud … --data-dir`) find it.
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CloudEndpoint { url: string; pid: number }

export function endpointFile(dataDir: string): string {
  return join(dataDir, 'cloud', 'endpoint.json');
}

export function writeEndpoint(dataDir: string, endpoint: CloudEndpoint): void {
  const file = endpointFile(dataDir);
  mkdirSync(join(dataDir, 'cloud'), { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify(endpoint)}\n`);
  renameSync(`${file}.tmp`, file);
}

/** Removes the file if it still names this process (a newer service may have replaced it). */
export function removeEndpoint(dataDir: string, pid: number): void {
  const file = endpointFile(dataDir);
  try {
    if ((JSON.parse(readFileSync(file, 'utf8')) as CloudEndpoint).pid === pid) rmSync(file);
  } catch { /* already gone */ }
}

/** The URL of the cloud serving `dataDir`; throws saying how to start one when there is none. */
export function readEndpoint(dataDir: string): string {
  const file = endpointFile(dataDir);
  const start = `start it with: bosun cloud serve --data-dir ${dataDir}`;
  if (!existsSync(file)) throw new Error(`no local cloud is running for ${dataDir} (${file} does not exist); ${start}`);
  let endpoint: CloudEndpoint;
  try { endpoint = JSON.parse(readFileSync(file, 'utf8')) as CloudEndpoint; } catch (e) {
    throw new Error(`cannot read ${file}: ${(e as Error).message}`);
  }
  if (!isAlive(endpoint.pid)) throw new Error(`the local cloud recorded in ${file} (pid ${endpoint.pid}) is not running; ${start}`);
  return endpoint.url;
}

function isAlive(pid: number): boolean {
  try { process.kill(pid, 0); return true; } catch (e) { return (e as NodeJS.ErrnoException).code === 'EPERM'; }
}
