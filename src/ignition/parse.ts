// Parsing an Ignition 3.x config (JSON text or an already-decoded object) by its
// `ignition.version`, as Ignition parses one: the result is typed and validated, without the keys
// Ignition ignores, with the warnings Ignition would report; or an error listing every problem.
import { BosunError } from '../common/errors.js';
import type { IgnitionConfig } from './types.js';
import { checkConfig, isError, type ValidationProblem } from './validate.js';
import type { Spec3Minor } from './version.js';

export class IgnitionConfigError extends BosunError {
  constructor(readonly problems: ValidationProblem[]) {
    super('IgnitionConfigInvalid', `invalid Ignition config: ${problems.map(formatProblem).join('; ')}`);
  }
}

export interface ParsedConfig {
  config: IgnitionConfig;
  minor: Spec3Minor;
  /** What Ignition would warn about (unused keys, mode bits, ...); none of it stops the config. */
  warnings: ValidationProblem[];
}

/** `path: message`, or the message alone for the config as a whole. */
export function formatProblem(p: ValidationProblem): string {
  return p.path ? `${p.path}: ${p.message}` : p.message;
}

/** Parses and validates; throws IgnitionConfigError naming every offending field. */
export function parseConfig(input: string | unknown): ParsedConfig {
  let value: unknown = input;
  if (typeof input === 'string') {
    try { value = JSON.parse(input); } catch (e) {
      throw new IgnitionConfigError([{ path: '', message: `not valid JSON: ${(e as Error).message}` }]);
    }
  }
  const { problems, config } = checkConfig(value);
  if (!config) throw new IgnitionConfigError(problems.filter(isError));
  return { config, minor: Number(config.ignition.version.split('.')[1]) as Spec3Minor, warnings: problems.filter((p) => !isError(p)) };
}
