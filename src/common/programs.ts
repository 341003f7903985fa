// Finding a program to run, as a shell would, plus the system directories a non-root PATH often
// lacks (Debian puts haproxy and nft in /usr/sbin).
import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

const SYSTEM_DIRS = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** `program` when it is a path that can be run, else the first directory of PATH (then the system ones) holding it; undefined when none does. */
export function findProgram(program: string): string | undefined {
  if (program.includes('/')) return executable(program) ? program : undefined;
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), ...SYSTEM_DIRS];
  return dirs.map((d) => join(d, program)).find(executable);
}
