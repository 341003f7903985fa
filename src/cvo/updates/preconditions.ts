// The upgrade preconditions the CVO runs before accepting a new payload, as one pure function:
// no downgrade (except back to the previous version within the same z-stream), no minor skip nor
// major change, Upgradeable=False blocks minor and major updates but not patches, a target that is
// not recommended is a warning. `force` turns blocking failures into accepted risks, recorded in
// history[].acceptedRisks.
import semver from 'semver';
import type { ResolvedUpdate } from './resolve.js';

export type PreconditionName = 'ClusterVersionDowngrade' | 'MinorVersionSkip' | 'MajorVersionUpdate' | 'UpgradeableFalse' | 'NotRecommended';

export interface PreconditionFinding {
  name: PreconditionName;
  message: string;
}

export interface PreconditionInput {
  currentVersion: string;
  target: Pick<ResolvedUpdate, 'version' | 'recommended' | 'message'>;
  /** The version the cluster was on before the current one (history[1]), if any. */
  previousVersion?: string;
  /** The aggregated Upgradeable condition; status False carries the operators' reasons. */
  upgradeable?: { status: 'True' | 'False' | 'Unknown' | string; reason?: string; message?: string };
  force?: boolean;
}

export interface PreconditionResult {
  /** Whether the update may proceed. */
  accepted: boolean;
  /** Failures that stop the update (empty when accepted). */
  blocking: PreconditionFinding[];
  /** Findings that do not stop it: warnings, and with force the failures it overrode. */
  warnings: PreconditionFinding[];
  /** For history[].acceptedRisks: the failures force overrode, or undefined. */
  acceptedRisks?: string;
}

export function checkPreconditions(input: PreconditionInput): PreconditionResult {
  const { currentVersion, target, previousVersion, upgradeable, force } = input;
  const failures: PreconditionFinding[] = [];
  const warnings: PreconditionFinding[] = [];
  const current = semver.parse(currentVersion);
  const next = semver.parse(target.version);
  if (!current || !next) {
    failures.push({ name: 'ClusterVersionDowngrade', message: `cannot compare versions ${JSON.stringify(currentVersion)} and ${JSON.stringify(target.version)}: not semantic versions` });
  } else {
    const sameZStream = current.major === next.major && current.minor === next.minor;
    if (semver.lt(next, current)) {
      if (!(sameZStream && previousVersion === target.version)) {
        failures.push({
          name: 'ClusterVersionDowngrade',
          message: `${target.version} is older than the current ${currentVersion}; rollback is only supported to the previous version within the same z-stream${previousVersion ? ` (here ${previousVersion})` : ''}`,
        });
      }
    } else if (next.major !== current.major) {
      failures.push({ name: 'MajorVersionUpdate', message: `updating from ${currentVersion} to ${target.version} changes the major version; only minor and patch updates are supported` });
    } else if (next.minor > current.minor + 1) {
      failures.push({ name: 'MinorVersionSkip', message: `updating from ${currentVersion} to ${target.version} skips minor versions; update to ${current.major}.${current.minor + 1} first` });
    }
    const minorOrMajor = next.major !== current.major || next.minor !== current.minor;
    if (minorOrMajor && semver.gt(next, current) && upgradeable?.status === 'False') {
      failures.push({
        name: 'UpgradeableFalse',
        message: `the cluster is not upgradeable to a new minor version: ${upgradeable.message ?? upgradeable.reason ?? 'an operator reports Upgradeable=False'}; patch updates remain possible`,
      });
    }
  }
  if (target.recommended !== 'True') {
    const why = target.recommended === 'NotInGraph' ? 'it is not among the available updates' : target.recommended === 'Unknown' ? 'its risks could not be evaluated' : 'known risks apply';
    warnings.push({ name: 'NotRecommended', message: `the update to ${target.version} is not recommended: ${why}${target.message ? ` — ${target.message}` : ''}` });
  }
  if (failures.length === 0) return { accepted: true, blocking: [], warnings };
  if (force) {
    return {
      accepted: true,
      blocking: [],
      warnings: [...failures, ...warnings],
      acceptedRisks: failures.map((f) => `${f.name}: ${f.message}`).join('\n'),
    };
  }
  return { accepted: false, blocking: failures, warnings };
}
