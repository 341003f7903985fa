// `bosun release`: building bosun's releases into a release store. The `release` group is
// shared: other commands (keygen, sign, verify) attach to it through releaseGroup().
import { Command } from 'commander';
import { fileURLToPath } from 'node:url';

/** The repository root (src/cli/ and dist/cli/ are both two levels down). */
export const repositoryRoot = fileURLToPath(new URL('../../', import.meta.url));

/** The `release` command group of program, created on first use. */
export function releaseGroup(program: Command): Command {
  return (
    program.commands.find((c) => c.name() === 'release') ??
    program.command('release').description('build and manage release payloads in a release store')
  );
}

export function register(program: Command): void {
  releaseGroup(program)
    .command('build')
    .description('build the release payload for a version into a release store and print its pullspec')
    .requiredOption('--version <version>', 'the release version (semver), substituted for {{VERSION}} in the sources')
    .option('--from <dir>', 'release sources: manifests/ and releases/<version>.yaml', `${repositoryRoot}release-payload`)
    .option('--cvo-manifests <dir>', "the CVO's own install manifests, copied into the release's manifests/", `${repositoryRoot}manifests`)
    .requiredOption('--out <store>', 'the release store directory (one sha256=<hex> directory per release)')
    .addHelpText(
      'after',
      '\nThe pullspec is bosun.local/release@sha256:<hex>, the digest of the release files (the same\nsources and version always give the same pullspec). Example:\n  bosun release build --version 1.0.0 --out .bosun/releases',
    )
    .action(async (opts: { version: string; from: string; cvoManifests: string; out: string }) => {
      const { buildRelease } = await import('../cvo/payload/build.js');
      try {
        const built = buildRelease({ version: opts.version, from: opts.from, cvoManifests: opts.cvoManifests, store: opts.out });
        console.log(built.pullspec);
      } catch (err) {
        console.error(`error: ${(err as Error).message}`);
        process.exitCode = 1;
      }
    });
}
