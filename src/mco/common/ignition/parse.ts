// Parsing an Ignition 3.x config (JSON text or an already-decoded object) by its
// `ignition.version`: the result is typed and validated, or an error listing every problem.
import type { IgnitionConfig } from './types.js';
import { validateConfig, type ValidationProblem } from './validate.js';
import type { Spec3Minor } from './version.js';

export class IgnitionConfigError extends Error {
  constructor(readonly problems: ValidationProblem[]) {
    super(`invalid Ignition config: ${problems.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join('; ')}`);
  }
}

export interface ParsedConfig { config: IgnitionConfig; minor: Spec3Minor }

/** Parses and validates; throws IgnitionConfigError naming every offending field. */
export function parseConfig(input: string | unknown): ParsedConfig {
  let value: unknown = input;
  if (typeof input === 'string') {
    try { value = JSON.parse(input); } catch (e) {
      throw new IgnitionConfigError([{ path: '', message: `not valid JSON: ${(e as Error).message}` }]);
    }
  }
  const problems = validateConfig(value);
  if (problems.length > 0) throw new IgnitionConfigError(problems);
  const config = value as IgnitionConfig;
  return { config, minor: Number(config.ignition.version.split('.')[1]) as Spec3Minor };
}
