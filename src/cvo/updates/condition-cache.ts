// The throttle and cache in front of a cluster-condition matcher, with the rules of OpenShift's
// CVO (pkg/clusterconditions/cache): PromQL risks are asked of the cluster's Prometheus, which
// must not be hammered by a graph with hundreds of risks.
//   - key: the rule as JSON (type and query);
//   - at most one real evaluation per `minBetweenMs` (1 s) across all rules; a call inside that
//     window answers from the cache, or, for a rule never evaluated, fails "throttled" (the
//     update is then Recommended=Unknown until its turn comes);
//   - each rule is evaluated again at most every `minForRuleMs` (1 h);
//   - an entry expires `expirationMs` (24 h) after its evaluation (or, never evaluated, after it
//     was last asked for);
//   - a call allowed to evaluate spends the evaluation on the stalest rule asked for since its
//     last evaluation (never evaluated first, then oldest) and due, so rules asked in the same
//     order every time cannot starve the later ones; the caller gets its own rule's cached
//     answer, if any. With no such rule, the caller's own rule is evaluated when it has no
//     answer younger than minForRuleMs (upstream evaluates it then whatever its age; its
//     documented minimum per rule is kept here).
// Failures are cached like answers: a rule that could not be evaluated is not asked again before
// its hour is up. Time is the injected clock's.
import type { Clock } from '../../kube/clock.js';
import { BosunError } from '../../common/errors.js';
import type { MatchingRule } from '../../cincinnati/graph-api.js';

/** Whether a rule matches this cluster; throws when it cannot tell. */
export type RuleMatcher = (rule: MatchingRule) => Promise<boolean>;

export interface ConditionCacheSettings {
  minBetweenMs: number;
  minForRuleMs: number;
  expirationMs: number;
}

/** OpenShift's CVO: one query a second, each rule hourly, entries kept a day. */
export const DEFAULT_CACHE_SETTINGS: ConditionCacheSettings = { minBetweenMs: 1000, minForRuleMs: 3_600_000, expirationMs: 86_400_000 };

/** A rule that has to wait for its turn. */
export class ThrottledError extends BosunError {
  constructor(message: string) {
    super('EvaluationThrottled', message);
  }
}

interface Entry {
  rule: MatchingRule;
  /** When it was last asked for. */
  access: number;
  /** When its last evaluation completed (undefined: never evaluated). */
  when?: number;
  match?: boolean;
  error?: Error;
}

/** The cache key: the rule's meaning as JSON, independent of the order its fields were written in. */
export function ruleKey(rule: MatchingRule): string {
  return JSON.stringify(rule.promql ? { type: rule.type, promql: { promql: rule.promql.promql } } : { type: rule.type });
}

const hhmmss = (ms: number) => new Date(ms).toISOString().slice(11, 19) + 'Z';

export class ConditionCache {
  private readonly entries = new Map<string, Entry>();
  private lastEvaluation?: number;
  /** Calls run one at a time (an evaluation awaits the network). */
  private queue: Promise<unknown> = Promise.resolve();
  /** Real evaluations so far (for tests and logs). */
  evaluations = 0;

  constructor(
    private readonly matcher: RuleMatcher,
    private readonly clock: Clock,
    private readonly settings: ConditionCacheSettings = DEFAULT_CACHE_SETTINGS,
  ) {}

  /** Whether `rule` matches, from the cache or a fresh evaluation; throws the rule's failure, or ThrottledError. */
  match(rule: MatchingRule): Promise<boolean> {
    const run = this.queue.then(() => this.matchNow(rule));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async matchNow(rule: MatchingRule): Promise<boolean> {
    const key = ruleKey(rule);
    const now = this.clock.now();
    try {
      this.expire(now);
      if (this.lastEvaluation !== undefined && now - this.lastEvaluation <= this.settings.minBetweenMs) {
        return this.cached(key, `evaluation is throttled until ${hhmmss(this.lastEvaluation + this.settings.minBetweenMs)}`);
      }
      let target = this.stalest(now);
      // Nobody waiting is due: evaluate this rule if it has no answer younger than minForRuleMs.
      if (!target || target.tooFresh) {
        const own = this.entries.get(key);
        if (own?.when !== undefined && now - own.when < this.settings.minForRuleMs) return this.cached(key, 'evaluation is throttled');
        target = { key, rule, tooFresh: false };
      }
      let match: boolean | undefined;
      let error: Error | undefined;
      try {
        this.evaluations++;
        match = await this.matcher(target.rule);
      } catch (e) {
        error = e instanceof Error ? e : new Error(String(e));
      }
      const done = this.clock.now();
      this.lastEvaluation = done;
      const entry = this.entries.get(target.key) ?? { rule: target.rule, access: now };
      this.entries.set(target.key, { ...entry, when: done, match, error });
      return this.cached(key, 'evaluation is throttled');
    } finally {
      const entry = this.entries.get(key);
      if (entry) entry.access = now;
      else this.entries.set(key, { rule, access: now });
    }
  }

  /** The cached answer for `key`, or a ThrottledError when it has none. */
  private cached(key: string, throttled: string): boolean {
    const entry = this.entries.get(key);
    if (entry?.when === undefined) throw new ThrottledError(throttled);
    if (entry.error) throw entry.error;
    return entry.match!;
  }

  /**
   * The rule most in need of an evaluation among those asked for since their last one: never
   * evaluated first, then the oldest evaluation, ties to the longest waiting. `tooFresh` when even
   * that one was evaluated less than minForRuleMs ago.
   */
  private stalest(now: number): { key: string; rule: MatchingRule; tooFresh: boolean } | undefined {
    let best: [string, Entry] | undefined;
    for (const [key, entry] of this.entries) {
      if (entry.when !== undefined && entry.access <= entry.when) continue;
      if (!best) {
        best = [key, entry];
        continue;
      }
      const [, b] = best;
      const older = (entry.when ?? -Infinity) < (b.when ?? -Infinity);
      const tie = (entry.when ?? -Infinity) === (b.when ?? -Infinity) && entry.access < b.access;
      if (older || tie) best = [key, entry];
    }
    if (!best) return undefined;
    const [key, entry] = best;
    return { key, rule: entry.rule, tooFresh: entry.when !== undefined && now - entry.when < this.settings.minForRuleMs };
  }

  private expire(now: number): void {
    for (const [key, entry] of this.entries) {
      if (now - (entry.when ?? entry.access) > this.settings.expirationMs) this.entries.delete(key);
    }
  }
}
