// Ignition spec versions bosun understands: 3.0.0–3.5.0 as input and output, 2.2.0 as a
// translation target for old clients. Parsing of the `ignition.version` string lives here.

/** Minor versions of spec 3 that bosun reads and writes. */
export const SPEC3_MINORS = [0, 1, 2, 3, 4, 5] as const;
export type Spec3Minor = (typeof SPEC3_MINORS)[number];
export const LATEST_SPEC3_MINOR: Spec3Minor = 5;

export interface SpecVersion {
  major: number;
  minor: number;
  patch: number;
  /** Pre-release suffix such as "experimental"; Ignition refuses these in production configs. */
  pre?: string;
}

const VERSION_RE = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?$/;

/** Parses "3.4.0" (or "3.4.0-experimental"); undefined when it is not a semantic version. */
export function parseSpecVersion(text: string): SpecVersion | undefined {
  const m = VERSION_RE.exec(text);
  if (!m) return undefined;
  return { major: Number(m[1]), minor: Number(m[2]), patch: Number(m[3]), ...(m[4] ? { pre: m[4] } : {}) };
}

export function formatSpec3(minor: Spec3Minor): string {
  return `3.${minor}.0`;
}

export function isSpec3Minor(n: number): n is Spec3Minor {
  return (SPEC3_MINORS as readonly number[]).includes(n);
}
