// Evaluating a conditional update's risks into its Recommended condition. `Always` applies;
// `PromQL` is asked of an injectable evaluator (the CVO wires one to --metrics-url) and must
// answer exactly 0 or 1; a risk's rules are tried in order and the first definite answer wins; a
// risk no rule could answer makes the update Recommended=Unknown (never silently recommended).
import type { MatchingRule, Risk } from '../../cincinnati/graph-api.js';
import type { ConditionalUpdate } from './graph-walk.js';

/** Returns the value of a PromQL expression that should yield one sample; throws when it cannot. */
export type PromQLEvaluator = (promql: string) => Promise<number>;

export interface RecommendedCondition {
  type: 'Recommended';
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** Whether one rule says the risk applies; throws when it cannot tell. */
async function ruleMatches(rule: MatchingRule, evaluate: PromQLEvaluator | undefined): Promise<boolean> {
  if (rule.type === 'Always') return true;
  if (rule.type === 'PromQL') {
    if (!evaluate) throw new Error('no metrics source is configured to evaluate PromQL');
    const value = await evaluate(rule.promql!.promql);
    if (value !== 0 && value !== 1) throw new Error(`PromQL answered ${value}; a risk query must give 0 or 1`);
    return value === 1;
  }
  throw new Error(`unsupported rule type ${rule.type}`);
}

/** Whether a risk applies to this cluster: true/false, or an Error when no rule could decide. */
export async function riskApplies(risk: Risk, evaluate: PromQLEvaluator | undefined): Promise<boolean | Error> {
  const errors: string[] = [];
  for (const rule of risk.matchingRules) {
    try {
      return await ruleMatches(rule, evaluate);
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  return new Error(errors.join('; ') || 'the risk has no rule to evaluate');
}

export async function evaluateConditionalUpdate(update: ConditionalUpdate, evaluate: PromQLEvaluator | undefined): Promise<RecommendedCondition> {
  const applying: Risk[] = [];
  const failed: string[] = [];
  for (const risk of update.risks) {
    const result = await riskApplies(risk, evaluate);
    if (result instanceof Error) failed.push(`could not evaluate exposure to ${risk.name}: ${result.message} (${risk.url})`);
    else if (result) applying.push(risk);
  }
  if (applying.length > 0) {
    return {
      type: 'Recommended',
      status: 'False',
      reason: applying.length === 1 ? applying[0].name : 'MultipleReasons',
      message: [...applying.map((r) => `${r.message} ${r.url}`), ...failed].join('\n\n'),
    };
  }
  if (failed.length > 0) return { type: 'Recommended', status: 'Unknown', reason: 'EvaluationFailed', message: failed.join('\n\n') };
  return { type: 'Recommended', status: 'True', reason: 'AsExpected', message: `The update to ${update.release.version} is recommended, because none of the conditional update risks apply to this cluster.` };
}
