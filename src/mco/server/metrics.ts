// Prometheus metrics of the machine-config server: requests by port, pool, served version and
// status code, and request durations. A registry per server so several can run in one process.
import { Counter, Histogram, Registry } from 'prom-client';

export class ServerMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'mcs_requests_total',
    help: 'Requests answered by the machine-config server.',
    labelNames: ['listener', 'pool', 'version', 'code'] as const,
    registers: [this.registry],
  });
  readonly duration = new Histogram({
    name: 'mcs_request_duration_seconds',
    help: 'Time to answer a machine-config server request.',
    labelNames: ['listener'] as const,
    buckets: [0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1],
    registers: [this.registry],
  });
}
