// Prometheus metrics of the controller toolkit, named as controller-runtime and client-go's
// workqueue name theirs so that existing dashboards and alerts read them: reconciles by result,
// reconcile errors and durations per controller; queue depth, adds, retries, time waiting and
// time working per queue. Every bosun process keeps them in one registry, served on a component
// manager's /metrics (manager.ts).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export const registry = new Registry();
collectDefaultMetrics({ register: registry });

const buckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export const reconcileTotal = new Counter({
  name: 'controller_runtime_reconcile_total',
  help: 'Reconciles per controller, by result (success, error, requeue, requeue_after, terminal_error).',
  labelNames: ['controller', 'result'],
  registers: [registry],
});
export const reconcileErrors = new Counter({
  name: 'controller_runtime_reconcile_errors_total',
  help: 'Reconciles per controller that ended in an error.',
  labelNames: ['controller'],
  registers: [registry],
});
export const reconcileTime = new Histogram({
  name: 'controller_runtime_reconcile_time_seconds',
  help: 'Time per reconcile, per controller.',
  labelNames: ['controller'],
  buckets,
  registers: [registry],
});
export const queueDepth = new Gauge({ name: 'workqueue_depth', help: 'Keys waiting in the queue.', labelNames: ['name'], registers: [registry] });
export const queueAdds = new Counter({ name: 'workqueue_adds_total', help: 'Keys added to the queue.', labelNames: ['name'], registers: [registry] });
export const queueRetries = new Counter({ name: 'workqueue_retries_total', help: 'Keys re-added after a failure (rate limited).', labelNames: ['name'], registers: [registry] });
export const queueWait = new Histogram({ name: 'workqueue_queue_duration_seconds', help: 'Time a key waits in the queue before it is processed.', labelNames: ['name'], buckets, registers: [registry] });
export const queueWork = new Histogram({ name: 'workqueue_work_duration_seconds', help: 'Time spent processing a key.', labelNames: ['name'], buckets, registers: [registry] });
