// The context a PodWorker runs in on a node, for tests that run one against the embedded API
// server: node node-a at 127.0.9.1, no events recorded, a short back-off, and `echoCommand` as the
// process of a bosun.local/echo container.
import type { PodContext } from '../../src/cluster/node-agent/pod-worker.js';
import type { KubeClient } from '../../src/kube/client.js';
import { logger } from '../../src/common/log.js';
import type { TestApiServer } from './apiserver.js';

export const TEST_NODE_IP = '127.0.9.1';

export function podWorkerContext(apiServer: TestApiServer, client: KubeClient, root: string, echoCommand: string[]): PodContext {
  return {
    client, root, nodeName: 'node-a', nodeIP: TEST_NODE_IP,
    apiServer: { host: '127.0.0.1', port: String(apiServer.port), caPem: apiServer.caPem },
    componentCommand: (argv) => argv, echoCommand,
    backoff: { baseMs: 100, maxMs: 1000 },
    events: { event: async () => undefined },
    log: logger('pod-worker-test'), onChange: () => undefined,
  };
}
