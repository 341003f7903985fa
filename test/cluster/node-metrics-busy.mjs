// A pod's process for the node metrics test: it starts a child that spins 60 ms of every 100 ms
// (so the CPU shows up only if the node agent measures the process's descendants), and stays up
// until SIGTERM, taking the child with it. The child also ends when its parent is gone.
import { spawn } from 'node:child_process';

const SPIN = `const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
  const until = Date.now() + 60;
  while (Date.now() < until);
}, 100);`;
const child = spawn(process.execPath, ['-e', SPIN], { stdio: 'ignore' });
console.log(`busy child ${child.pid}`);
process.on('SIGTERM', () => {
  child.kill('SIGKILL');
  process.exit(0);
});
setInterval(() => {}, 60_000);
