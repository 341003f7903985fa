// How software on a local machine asks its machine to reboot or power off: as `shutdown -r` asks
// systemd-logind, by writing the scheduled-shutdown record `/run/systemd/shutdown/scheduled`
// (its format: common/scheduled-shutdown.ts). While a machine is up the cloud looks for that file
// in its root; once its time has come the record is removed and the cloud reboots (reboot, kexec)
// or stops (poweroff, halt) the instance, exactly as its API would — a new boot ID, the runtime
// shut down and booted again. Dry runs are removed and ignored, as logind ignores them. (This is
// how the machine-config daemon reboots a node.)
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseScheduledShutdown, SCHEDULED_SHUTDOWN_FILE, type PowerRequest } from '../common/scheduled-shutdown.js';

/** Polls one booted machine's root for a scheduled shutdown. */
export class PowerRequestWatcher {
  private readonly timer: NodeJS.Timeout;

  constructor(root: string, onRequest: (request: PowerRequest) => void, intervalMs = 200) {
    const file = join(root, SCHEDULED_SHUTDOWN_FILE);
    this.timer = setInterval(() => {
      let text: string;
      try { text = readFileSync(file, 'utf8'); } catch { return; }
      const request = parseScheduledShutdown(text, Date.now());
      if (request === undefined) return;
      rmSync(file, { force: true });
      if (request === 'ignore') return;
      this.stop();
      onRequest(request);
    }, intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
