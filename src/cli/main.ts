// The `bosun` command: one subcommand per component, each defined in its own file in src/cli/
// and registered here.
import { Command } from 'commander';
import { createRequire } from 'node:module';
import { register as registerApiserver } from './apiserver.js';
import { register as registerStart } from './start.js';
import { register as registerCvo } from './cluster-version-operator.js';
import { register as registerRelease } from './release.js';
import { register as registerAdmRelease } from './adm-release.js';
import { register as registerUpdateService } from './update-service.js';
import { register as registerReleaseSigning } from './release-signing.js';
import { register as registerAdmUpgrade } from './adm-upgrade.js';
import { register as registerMachineConfigServer } from './machine-config-server.js';
import { register as registerMachineConfigController } from './machine-config-controller.js';
import { register as registerMachineConfigOperator } from './machine-config-operator.js';
import { register as registerCloud } from './cloud.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

const program = new Command();
program
  .name('bosun')
  .description('An OpenShift-style platform control plane: cluster-version operator, update service, machine-config operator, cloud-controller-manager operator.')
  .version(version, '--version', 'print the bosun version')
  .showHelpAfterError();

program
  .command('version')
  .description('print the bosun version')
  .action(() => console.log(`bosun ${version}`));

// Subcommand registrations, one line each.
registerStart(program);
registerApiserver(program);
registerCvo(program);
registerRelease(program);
registerAdmRelease(program);
registerUpdateService(program);
registerReleaseSigning(program);
registerAdmUpgrade(program);
registerMachineConfigServer(program);
registerMachineConfigOperator(program);
registerMachineConfigController(program);
registerCloud(program);

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // A command that fails says why in one line and exits non-zero; BOSUN_DEBUG=1 shows the stack.
  console.error(`error: ${(error as Error).message}`);
  if (process.env.BOSUN_DEBUG) console.error(error);
  process.exit(1);
}
