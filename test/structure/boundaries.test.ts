// The component boundaries of src/ as `npm run lint` enforces them (eslint.config.js, "Who may
// import whom" in docs/architecture.md): ESLint itself lints one import per row, as it would lint
// that line in a file of that folder, and every file of src/ that ESLint lints is under a
// boundary rule.
import { strict as assert } from 'node:assert';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { ESLint } from 'eslint';

const ROOT = join(import.meta.dirname, '../..');
const eslint = new ESLint({ cwd: ROOT });

/** The boundary errors ESLint reports for one line of code in a file at `file`. */
async function boundaryErrors(file: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(`${code}\n`, { filePath: join(ROOT, file) });
  return result.messages.filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

const rows: { file: string; code: string; allowed: boolean }[] = [
  // Operators reach neither the API server, the cluster's controllers, the cloud's insides, nor each other.
  { file: 'src/cvo/sync.ts', code: "import { startApiServer } from '../apiserver/server.js';", allowed: false },
  { file: 'src/mco/operator/operator.ts', code: "import { serviceAllocations } from '../../apiserver/kinds/service-allocation.js';", allowed: false },
  { file: 'src/capi/rollout.ts', code: "export { scaledValue } from '../cluster/workloads/daemonset.js';", allowed: false },
  { file: 'src/mco/daemon/writer.ts', code: "import type { LocalCloud } from '../../cloud/cloud.js';", allowed: false },
  { file: 'src/ccm-operator/local-provider.ts', code: "import { MachineRuntime } from '../cloud/machine-runtime.js';", allowed: false },
  { file: 'src/capi/machine-controller.ts', code: "import { renderConfig } from '../mco/controller/render.js';", allowed: false },
  { file: 'src/cvo/updates/upstream.ts', code: "import { buildGraph } from '../../update-service/graph.js';", allowed: false },
  // …and use the libraries and the cloud's client.
  { file: 'src/capi/local/localmachine-controller.ts', code: "import { CloudClient } from '../../cloud/client.js';", allowed: true },
  { file: 'src/ccm-operator/local-provider.ts', code: "import type { Instance } from '../cloud/types.js';", allowed: true },
  { file: 'src/mco/daemon/writer.ts', code: "import { filesStage } from '../../ignition/apply/files-stage.js';", allowed: true },
  { file: 'src/cvo/updates/graph-walk.ts', code: "import type { GraphResponse } from '../../cincinnati/graph-api.js';", allowed: true },
  { file: 'src/capi/rollout.ts', code: "import { templateHash } from '../kube/template-hash.js';", allowed: true },
  // Libraries and the update service never import a component above them.
  { file: 'src/update-service/release-store.ts', code: "import { loadPayload } from '../cvo/payload/payload.js';", allowed: false },
  { file: 'src/ignition/apply/fetch-stage.ts', code: "import { IGNITION_MEDIA_TYPE } from '../../mco/server/server.js';", allowed: false },
  { file: 'src/cincinnati/graph-api.ts', code: "import type { Release } from '../update-service/graph.js';", allowed: false },
  { file: 'src/kube/controller.ts', code: "import { Informer } from '../cluster/workloads/context.js';", allowed: false },
  { file: 'src/common/log.ts', code: "import { resources } from '../kube/resources.js';", allowed: false },
  { file: 'src/cloud/firmware.ts', code: "import { negotiateVersion } from '../mco/server/served-config.js';", allowed: false },
  { file: 'src/release/signature.ts', code: "import { verifyRelease } from '../cvo/verify.js';", allowed: false },
  // The API objects' types are for everyone and depend on no one.
  { file: 'src/kube/informer.ts', code: "import type { Kind } from '../api/meta.js';", allowed: true },
  { file: 'src/api/core.ts', code: "import type { Obj } from '../kube/client.js';", allowed: false },
  // The installer starts the operators; the command line reaches everything.
  { file: 'src/cluster/install/bootstrap.ts', code: "import { CapiControllers } from '../../capi/controllers.js';", allowed: true },
  { file: 'src/cli/start.ts', code: "import { bringUp } from '../cluster/bring-up.js';", allowed: true },
  { file: 'src/cluster/bring-up.ts', code: "import { main } from '../cli/main.js';", allowed: false },
];

for (const { file, code, allowed } of rows) {
  test(`${file}: ${code} is ${allowed ? 'allowed' : 'a lint error'}`, async () => {
    const errors = await boundaryErrors(file, code);
    if (allowed) assert.deepEqual(errors, []);
    else assert.match(errors.join('\n'), /may not import src\/[a-z-]+.*Who may import whom/);
  });
}

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : name.endsWith('.ts') ? [path] : [];
  });
}

test('every file of src/ is under a boundary rule (a new folder of src/ needs its row in the table)', async () => {
  const uncovered: string[] = [];
  for (const path of sources(join(ROOT, 'src'))) {
    if (await eslint.isPathIgnored(path)) continue;
    const config = (await eslint.calculateConfigForFile(path)) as { rules?: Record<string, unknown[]> } | undefined;
    const rule = config?.rules?.['no-restricted-imports'];
    if (!rule || rule[0] === 0 || rule[0] === 'off') uncovered.push(relative(ROOT, path));
  }
  assert.deepEqual(uncovered, []);
});
