// The scheduled-shutdown record through which software on a machine asks for a reboot or a
// power-off, as `shutdown -r` asks systemd-logind: the file `/run/systemd/shutdown/scheduled`,
// lines `USEC=<microseconds since the epoch>` and `MODE=reboot|poweroff|halt|kexec|dry-…`.
// Shared by the side that writes it (the machine-config daemon) and the side that honours it (the
// local cloud's machines, cloud/power-requests.ts), so both name one file and read one format.

export const SCHEDULED_SHUTDOWN_FILE = '/run/systemd/shutdown/scheduled';

export type PowerRequest = 'reboot' | 'stop';

/**
 * The request a scheduled-shutdown record makes at `nowMs`: undefined while it is in the future,
 * or while it is empty (a writer that truncates before writing: read again later, never taken
 * for a power-off); 'ignore' when it asks nothing.
 */
export function parseScheduledShutdown(text: string, nowMs: number): PowerRequest | 'ignore' | undefined {
  if (text.trim() === '') return undefined;
  const fields = new Map(text.split('\n').map((l) => l.split('=')).filter((kv) => kv.length >= 2).map(([k, ...v]) => [k.trim(), v.join('=').trim()]));
  const usec = Number(fields.get('USEC') ?? '0');
  if (Number.isFinite(usec) && usec / 1000 > nowMs) return undefined;
  const mode = fields.get('MODE') ?? 'poweroff';
  if (mode === 'reboot' || mode === 'kexec') return 'reboot';
  if (mode === 'poweroff' || mode === 'halt') return 'stop';
  return 'ignore';
}
