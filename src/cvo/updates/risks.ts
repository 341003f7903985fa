// Evaluating conditional updates' risks into their Recommended conditions, as OpenShift's CVO
// does (pkg/cvo/availableupdates.go):
//   - each risk is evaluated once, however many updates carry it, in the order of the highest
//     version it blocks, then by name (so the throttled cache serves the nearest updates first);
//   - a risk's rules are tried in order, the first that evaluates decides; all failing makes the
//     risk unknown. `Always` applies; `PromQL` is asked of the matcher (condition-cache.ts in
//     front of promql.ts);
//   - an update is Recommended=True reason NotExposedToRisks when no risk applies;
//     Recommended=False with the risk's name as reason (ExposedToRisks when the name is not a
//     valid condition reason) and its message and URL when one applies; MultipleReasons when
//     several reasons meet; Recommended=Unknown reason EvaluationFailed when a risk could not be
//     evaluated (False wins over Unknown); an applying risk named in
//     spec.desiredUpdate.acceptRisks counts as recommended, reason AllExposedRisksAccepted.
// The condition logic (recommendedCondition) is pure.
import type { MatchingRule, Risk } from '../../cincinnati/graph-api.js';
import type { ConditionalUpdate } from './graph-walk.js';
import semver from 'semver';

export interface RecommendedCondition {
  type: 'Recommended';
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** Whether a PromQL rule matches; throws when it cannot tell (condition-cache.ts's ConditionCache.match). */
export type PromQLRuleMatcher = (rule: MatchingRule) => Promise<boolean>;

export const REASON_NOT_EXPOSED = 'NotExposedToRisks';
export const REASON_ACCEPTED = 'AllExposedRisksAccepted';
export const REASON_EVALUATION_FAILED = 'EvaluationFailed';
export const REASON_MULTIPLE = 'MultipleReasons';
export const REASON_EXPOSED = 'ExposedToRisks';

/** A condition reason as Kubernetes allows it. */
const REASON_PATTERN = /^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/;

/** Whether one rule says the risk applies; throws when it cannot tell. */
async function ruleMatches(rule: MatchingRule, promql: PromQLRuleMatcher | undefined): Promise<boolean> {
  if (rule.type === 'Always') return true;
  if (rule.type === 'PromQL') {
    if (!rule.promql?.promql?.trim()) throw new Error("the 'promql.promql' query string must be non-empty for 'type: PromQL' rules");
    if (!promql) throw new Error('no PromQL service is configured to evaluate the rule');
    return promql(rule);
  }
  throw new Error(`unsupported rule type ${rule.type}`);
}

/** Whether a risk applies to this cluster: true/false, or an Error when no rule could decide. */
export async function riskApplies(risk: Risk, promql: PromQLRuleMatcher | undefined): Promise<boolean | Error> {
  const errors: string[] = [];
  for (const rule of risk.matchingRules) {
    try {
      return await ruleMatches(rule, promql);
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  return new Error(errors.length > 1 ? `[${errors.join(', ')}]` : errors[0] || 'the risk has no rule to evaluate');
}

/** The risks of all updates, each once, by the highest version it blocks (descending), then by name. */
export function risksInOrder(updates: ConditionalUpdate[]): Risk[] {
  const byName = new Map<string, { version: string; risk: Risk }>();
  for (const update of updates) {
    for (const risk of update.risks) {
      const seen = byName.get(risk.name);
      if (!seen || semver.gt(update.release.version, seen.version)) byName.set(risk.name, { version: update.release.version, risk });
    }
  }
  return [...byName.values()].sort((a, b) => semver.rcompare(a.version, b.version) || (a.risk.name < b.risk.name ? -1 : a.risk.name > b.risk.name ? 1 : 0)).map((x) => x.risk);
}

/** The reason after `now` meets `want` (OpenShift's rule: distinct exposures become MultipleReasons). */
function mergeReason(now: string, want: string): string {
  if (now === REASON_NOT_EXPOSED || now === want) return want;
  if (now === REASON_ACCEPTED && want !== REASON_NOT_EXPOSED) return want;
  if (now === REASON_EVALUATION_FAILED && want === REASON_EXPOSED) return want;
  if (want === REASON_NOT_EXPOSED) return now;
  if (now === REASON_EVALUATION_FAILED && want === REASON_ACCEPTED) return now;
  if (now === REASON_EXPOSED && (want === REASON_ACCEPTED || want === REASON_EVALUATION_FAILED)) return now;
  return REASON_MULTIPLE;
}

/** False wins over Unknown, Unknown over True. */
function mergeStatus(now: RecommendedCondition['status'], want: RecommendedCondition['status']): RecommendedCondition['status'] {
  if (now === 'False' || want === 'False') return 'False';
  if (now === 'Unknown' || want === 'Unknown') return 'Unknown';
  return want;
}

export function unknownExposureMessage(risk: Risk, error: Error): string {
  return `Could not evaluate exposure to update risk ${risk.name} (${error.message})\n  ${risk.name} description: ${risk.message}\n  ${risk.name} URL: ${risk.url}`;
}

/** The Recommended condition of one update from what is known of its risks (by name). Pure. */
export function recommendedCondition(update: ConditionalUpdate, applies: ReadonlyMap<string, boolean | Error>, accepted: ReadonlySet<string> = new Set()): RecommendedCondition {
  const condition: RecommendedCondition = {
    type: 'Recommended',
    status: 'True',
    reason: REASON_NOT_EXPOSED,
    message: 'The update is recommended, because none of the conditional update risks apply to this cluster.',
  };
  const problems: string[] = [];
  for (const risk of update.risks) {
    const result = applies.get(risk.name) ?? new Error(`risk ${risk.name} was not evaluated`);
    if (result instanceof Error) {
      condition.status = mergeStatus(condition.status, 'Unknown');
      condition.reason = mergeReason(condition.reason, REASON_EVALUATION_FAILED);
      problems.push(unknownExposureMessage(risk, result));
    } else if (result && accepted.has(risk.name)) {
      condition.status = mergeStatus(condition.status, 'True');
      condition.reason = mergeReason(condition.reason, REASON_ACCEPTED);
      condition.message = 'The update is recommended, because either risk does not apply to this cluster or it is accepted by cluster admins.';
    } else if (result) {
      condition.status = mergeStatus(condition.status, 'False');
      condition.reason = mergeReason(condition.reason, REASON_PATTERN.test(risk.name) ? risk.name : REASON_EXPOSED);
      problems.push(`${risk.message} ${risk.url}`);
    }
  }
  if (problems.length > 0) condition.message = problems.join('\n\n');
  return condition;
}

/** Evaluates every risk of `updates` once: each update's Recommended condition, in order, and whether each risk applies. */
export async function evaluateConditionalUpdates(
  updates: ConditionalUpdate[],
  promql: PromQLRuleMatcher | undefined,
  accepted: ReadonlySet<string> = new Set(),
): Promise<{ conditions: RecommendedCondition[]; risks: ReadonlyMap<string, boolean | Error> }> {
  const applies = new Map<string, boolean | Error>();
  for (const risk of risksInOrder(updates)) applies.set(risk.name, await riskApplies(risk, promql));
  return { conditions: updates.map((update) => recommendedCondition(update, applies, accepted)), risks: applies };
}

/** One update's condition (its risks evaluated on their own). */
export async function evaluateConditionalUpdate(update: ConditionalUpdate, promql: PromQLRuleMatcher | undefined, accepted: ReadonlySet<string> = new Set()): Promise<RecommendedCondition> {
  return (await evaluateConditionalUpdates([update], promql, accepted)).conditions[0];
}
