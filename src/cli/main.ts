// The `bosun` command: one subcommand per component, each defined in its own file in src/cli/
// and registered here.
import { Command } from 'commander';
import { createRequire } from 'node:module';
import { register as registerMachineConfigServer } from './machine-config-server.js';

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
registerMachineConfigServer(program);

await program.parseAsync(process.argv);
