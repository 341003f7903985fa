// `bosun adm`: administrative commands, modelled on `oc adm`. The group is shared: each
// command file attaches its subcommands through admGroup().
import type { Command } from 'commander';

/** The `adm` command group of program, created on first use. */
export function admGroup(program: Command): Command {
  return program.commands.find((c) => c.name() === 'adm') ?? program.command('adm').description('cluster administration (as oc adm)');
}
