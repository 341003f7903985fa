// A pod's process does not outlive its machine. The node agent runs each container process with a
// pipe on its stdin and BOSUN_LIFELINE=stdin; when the agent's process dies however it dies (even
// SIGKILL, which leaves no chance to stop its children), the pipe closes and the container process
// stops itself as if the machine had gone down: SIGTERM to itself (its graceful shutdown), and
// exit after a grace period if that does not end it.
const GRACE_MS = 10_000;

export function holdLifeline(): void {
  if (process.env.BOSUN_LIFELINE !== 'stdin') return;
  const lost = () => {
    setTimeout(() => process.exit(137), GRACE_MS).unref();
    process.kill(process.pid, 'SIGTERM');
  };
  process.stdin.on('end', lost);
  process.stdin.on('error', lost);
  process.stdin.resume();
  // The pipe alone must not keep a finished process alive.
  (process.stdin as unknown as { unref?: () => void }).unref?.();
}
