// The hook between a local machine and what runs on it once it has booted. The cloud boots the
// machine (firmware, Ignition on first boot, boot ID) and then calls the runtime; before the
// machine goes down (reboot, stop, terminate, the cloud shutting down) it calls the runtime to stop
// everything it started. The node agent implements this interface; the cloud never needs to know
// more about it than what is here.
import type { Instance } from './types.js';

export interface BootedMachine {
  /** The instance as recorded when the boot completed. */
  instance: Instance;
  /** The machine's root filesystem: `<data-dir>/machines/<instance-id>/root`. */
  root: string;
  /** This boot's ID (also at `<root>/proc/sys/kernel/random/boot_id`). */
  bootId: string;
  /** True on the boot that ran Ignition. */
  firstBoot: boolean;
}

export interface MachineRuntime {
  /**
   * The machine has booted: start what it runs (the kubelet's part). Returns once started; what it
   * starts keeps running until onShutdown. A throw marks the boot Failed with the message.
   */
  onBoot(machine: BootedMachine): Promise<void>;
  /** The machine is going down: stop everything onBoot started, and return when it has stopped. */
  onShutdown(machine: BootedMachine): Promise<void>;
}

/** A machine that runs nothing after boot (the cloud on its own, or a machine without an agent). */
export const NO_RUNTIME: MachineRuntime = {
  async onBoot() {},
  async onShutdown() {},
};
