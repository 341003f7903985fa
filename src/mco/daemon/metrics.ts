// The machine-config daemon's Prometheus metrics, named, labelled and valued as OpenShift's daemon
// (pkg/daemon/metrics.go) so that its alerts (MCDRebootError, MCDPivotError, KubeletHealthState)
// and dashboards read them:
//   mcd_update_state{config, err}   when the node last reached its desired config (config, err "")
//                                   or a pass last failed (config "", err the message); one series
//   mcd_state{state, reason}        the node's state annotation as the daemon last saw or wrote it
//                                   (reason for Degraded and Unreconcilable), valued when it
//                                   entered that state; one series
//   mcd_reboots_failed_total        reboots that failed: the host refused the request (it could
//                                   not be made), or took it and the machine was still in the
//                                   same boot --reboot-timeout later
//   mcd_pivot_errors_total          a gauge, as upstream's: failed writes of an update onto the
//                                   host (bosun's "pivot": there is no OS image to rebase, the
//                                   write is what changes the host), back to 0 after one succeeds
//   mcd_kubelet_state               failed kubelet health checks in a row (the daemon's passes
//                                   read the node's Ready condition, which the kubelet posts)
//   mcd_config_drift                when drift from the current config was found, 0 when none
// A registry per daemon, so that several daemons can run in one process (tests).
import { Counter, Gauge, Registry } from 'prom-client';

export class DaemonMetrics {
  readonly registry = new Registry();
  readonly updateState = new Gauge({ name: 'mcd_update_state', help: 'completed update config or error', labelNames: ['config', 'err'] as const, registers: [this.registry] });
  readonly state = new Gauge({ name: 'mcd_state', help: 'state of daemon on specified node', labelNames: ['state', 'reason'] as const, registers: [this.registry] });
  readonly rebootsFailed = new Counter({ name: 'mcd_reboots_failed_total', help: 'Total number of reboots that failed.', registers: [this.registry] });
  readonly pivotErrors = new Gauge({ name: 'mcd_pivot_errors_total', help: 'Total number of errors encountered during pivot.', registers: [this.registry] });
  readonly kubeletState = new Gauge({ name: 'mcd_kubelet_state', help: 'state of kubelet health monitor', registers: [this.registry] });
  readonly configDrift = new Gauge({ name: 'mcd_config_drift', help: 'timestamp for config drift', registers: [this.registry] });
  private lastState?: string;
  private lastUpdate?: string;
  private driftSince = 0;
  private kubeletFailures = 0;

  constructor() {
    this.kubeletState.set(0);
    this.pivotErrors.set(0);
    this.configDrift.set(0);
  }

  /** The node's state (and, when Degraded or Unreconcilable, why) as of `nowMs`; kept once per change. */
  setState(state: string, reason: string, nowMs: number): void {
    const key = JSON.stringify([state, reason]);
    if (key === this.lastState) return;
    this.lastState = key;
    this.state.reset();
    this.state.set({ state, reason }, nowMs / 1000);
  }

  /** The node reached `config`; or a pass failed with `error`. */
  setUpdate(config: string, error: string, nowMs: number): void {
    const key = JSON.stringify([config, error]);
    if (key === this.lastUpdate) return;
    this.lastUpdate = key;
    this.updateState.reset();
    this.updateState.set({ config, err: error }, nowMs / 1000);
  }

  /** Drift found (kept from its first sighting) or not. */
  setDrift(drifted: boolean, nowMs: number): void {
    if (drifted && this.driftSince) return;
    this.driftSince = drifted ? nowMs / 1000 : 0;
    this.configDrift.set(this.driftSince);
  }

  /** One kubelet health check: a failure counts up, a success resets the count. */
  kubeletCheck(healthy: boolean): void {
    this.kubeletFailures = healthy ? 0 : this.kubeletFailures + 1;
    this.kubeletState.set(this.kubeletFailures);
  }
}
