// The Prometheus Operator's kinds (monitoring.coreos.com) bosun ships CRDs for, from the types
// generated out of those CRDs (src/api/generated).
import type * as monitoring from './generated/monitoring-coreos-com.js';
import type { Kind } from './meta.js';

export type ServiceMonitor = Kind<monitoring.ServiceMonitorBody>;
export type PrometheusRule = Kind<monitoring.PrometheusRuleBody>;
export type ServiceMonitorEndpoint = NonNullable<monitoring.ServiceMonitorBody['spec']>['endpoints'][number];
export type RuleGroup = NonNullable<NonNullable<monitoring.PrometheusRuleBody['spec']>['groups']>[number];
export type Rule = NonNullable<RuleGroup['rules']>[number];
