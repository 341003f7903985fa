// Options for a local bring-up in tests: bosun's own release sources, loopback servers on random
// ports, release 1.0.0 on stable-1.0, and a fresh data directory.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BringUpOptions } from '../../src/cluster/bring-up.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

export function localClusterOptions(extra: Partial<BringUpOptions> = {}): BringUpOptions {
  return {
    dataDir: mkdtempSync(join(tmpdir(), 'bosun-local-')),
    releaseSources: join(root, 'release-payload'),
    cvoManifests: join(root, 'manifests'),
    api: { host: '127.0.0.1', port: 0 },
    updateService: { host: '127.0.0.1', port: 0 },
    machineConfigServer: { host: '127.0.0.1', tlsPort: 0, httpPort: 0 },
    version: '1.0.0',
    channel: 'stable-1.0',
    ...extra,
  };
}
