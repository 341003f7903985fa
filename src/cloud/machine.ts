// One local machine's power: boot (firmware, then the runtime's onBoot) and shut down (the
// runtime's onShutdown). A boot in progress — firmware waiting for its machine-config server, or a
// reboot's boot delay — can be aborted by a stop or a terminate at any moment; a shutdown waits
// for the aborted boot to settle first, so the runtime never sees onBoot and onShutdown overlap.
import type { Logger } from '../common/log.js';
import { Firmware, type MachineDir } from './firmware.js';
import type { BootedMachine, MachineRuntime } from './machine-runtime.js';
import type { Instance } from './types.js';

export type BootOutcome = { ok: true; bootId: string } | { ok: false; aborted: true } | { ok: false; aborted: false; message: string };

export class Machine {
  private booting?: { abort: AbortController; done: Promise<BootOutcome> };
  private booted?: BootedMachine;

  constructor(
    readonly dir: MachineDir,
    private readonly firmware: Firmware,
    private readonly runtime: MachineRuntime,
    private readonly log: Logger,
  ) {}

  /** Boots after `delayMs` (a reboot's time down); `instance()` reads the record when the boot completes. */
  boot(delayMs: number, instance: () => Instance, progress: (message: string) => void): Promise<BootOutcome> {
    if (this.booting) return this.booting.done;
    const abort = new AbortController();
    const done = this.runBoot(delayMs, instance, progress, abort.signal).finally(() => { this.booting = undefined; });
    this.booting = { abort, done };
    return done;
  }

  private async runBoot(delayMs: number, instance: () => Instance, progress: (message: string) => void, signal: AbortSignal): Promise<BootOutcome> {
    try {
      if (delayMs > 0) await abortableDelay(delayMs, signal);
      signal.throwIfAborted();
      progress('booting');
      const { bootId, firstBoot } = await this.firmware.boot(this.dir, signal, progress);
      signal.throwIfAborted();
      const booted: BootedMachine = { instance: { ...instance(), bootId }, root: this.dir.root, bootId, firstBoot };
      await this.runtime.onBoot(booted);
      this.booted = booted;
      this.log.info({ bootId, firstBoot }, 'machine booted');
      return { ok: true, bootId };
    } catch (e) {
      if (signal.aborted) return { ok: false, aborted: true };
      const message = (e as Error).message;
      this.log.warn({ err: message }, 'machine failed to boot');
      return { ok: false, aborted: false, message };
    }
  }

  /** Aborts a boot in progress (the machine is being powered off). */
  abortBoot(): void {
    this.booting?.abort.abort();
  }

  /** Powers off: aborts a boot in progress, then stops the runtime if the machine was up. */
  async shutdown(): Promise<void> {
    if (this.booting) {
      this.booting.abort.abort();
      await this.booting.done;
    }
    const booted = this.booted;
    this.booted = undefined;
    if (booted) {
      await this.runtime.onShutdown(booted);
      this.log.info({ bootId: booted.bootId }, 'machine shut down');
    }
  }
}

function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}
