/**
 * One syncRepo of URL into DIR (optionally only PATH), in a process of its own, printing the
 * CPU time and wall time of the sync alone as JSON (module loading excluded): bench/git-cpu.ts.
 *   node --import tsx bench/sync-once.ts URL DIR [PATH]
 */
import { performance } from 'node:perf_hooks';
import { syncRepo } from '../src/source/git.js';

const [url, dir, path] = process.argv.slice(2);
if (!url || !dir) throw new Error('usage: sync-once.ts URL DIR [PATH]');
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await syncRepo({ url, ref: 'main', dir, ...(path ? { path } : {}) });
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
process.stdout.write(
  JSON.stringify({ wallMs, userMs: cpu.user / 1000, sysMs: cpu.system / 1000 }) + '\n',
);
