/**
 * Artifact upload and download through `bpa serve` (a process, on loopback) against `cp` of
 * the same file on the same disk, and serve's peak memory while it takes a 1 GiB upload.
 * Run after `npm run build` (it runs bin/bpa):
 *   npx tsx bench/artifacts.ts [--mib 1024] [--runs 3]     (BPA_BENCH_DIR: where, default /tmp)
 * Uploads go through curl -T with X-Checksum-Sha256 (computed before the clock starts);
 * bpa hashes the body, writes it to the state directory and fsyncs it before answering, so
 * `cp` is measured alone and followed by `sync` of the copy.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { startServe, TOKEN } from '../test/integration/artifacts/serve-process.js';

function arg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

function run(cmd: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { maxBuffer: 1 << 24 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd}: ${stderr || err.message}`)) : resolve(stdout),
    ),
  );
}

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

async function median(runs: number, fn: () => Promise<number>): Promise<number> {
  const all: number[] = [];
  for (let i = 0; i < runs; i++) all.push(await fn());
  all.sort((a, b) => a - b);
  return all[Math.floor(all.length / 2)] as number;
}

async function sha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

const mib = arg('mib', 1024);
const runs = arg('runs', 3);
// The file, its copies and serve's state directory all live here: one disk.
const dir = await mkdtemp(join(process.env['BPA_BENCH_DIR'] ?? tmpdir(), 'bpa-bench-artifacts-'));
try {
  const file = join(dir, 'image.raw');
  await run('dd', ['if=/dev/urandom', `of=${file}`, 'bs=1M', `count=${mib}`, 'status=none']);
  const sum = await sha256(file);
  const rate = (s: number): string => `${(mib / s).toFixed(0)} MiB/s (${s.toFixed(2)} s)`;

  const cp = await median(runs, async () => {
    const out = join(dir, 'cp.raw');
    const s = await timed(() => run('cp', [file, out]));
    await rm(out);
    return s;
  });
  const cpSync = await median(runs, async () => {
    const out = join(dir, 'cp.raw');
    const s = await timed(async () => {
      await run('cp', [file, out]);
      await run('sync', [out]);
    });
    await rm(out);
    return s;
  });

  const serveDir = join(dir, 'serve');
  await mkdir(serveDir);
  const srv = await startServe(serveDir, { extra: ['--artifacts-max-mib', String(mib + 1)] });
  try {
    const before = await srv.peakRssKiB();
    let n = 0;
    const upload = await median(runs, () =>
      timed(() =>
        run('curl', [
          '-fsS',
          '-o',
          '/dev/null',
          '-T',
          file,
          '-H',
          `Authorization: Bearer ${TOKEN}`,
          '-H',
          `X-Checksum-Sha256: ${sum}`,
          // A new name each time, and the store emptied before: every run writes the content.
          `${srv.url}/api/v1/artifacts/images/run-${n++}.raw`,
        ]).then(() =>
          run('curl', [
            '-fsS',
            '-X',
            'DELETE',
            '-H',
            `Authorization: Bearer ${TOKEN}`,
            `${srv.url}/api/v1/artifacts/images/run-${n - 1}.raw`,
          ]),
        ),
      ),
    );
    const after = await srv.peakRssKiB();
    await run('curl', [
      '-fsS',
      '-o',
      '/dev/null',
      '-T',
      file,
      '-H',
      `Authorization: Bearer ${TOKEN}`,
      '-H',
      `X-Checksum-Sha256: ${sum}`,
      `${srv.url}/api/v1/artifacts/images/image.raw`,
    ]);
    const download = await median(runs, async () => {
      const out = join(dir, 'down.raw');
      const s = await timed(() =>
        run('curl', ['-fsS', '-o', out, `${srv.url}/artifacts/images/image.raw`]),
      );
      await rm(out);
      return s;
    });
    console.log(`file: ${mib} MiB of random bytes, median of ${runs} runs, same disk`);
    console.log(`cp                     ${rate(cp)}`);
    console.log(`cp + sync              ${rate(cpSync)}`);
    console.log(`upload (PUT, curl -T)  ${rate(upload)}   (hashed, fsynced, renamed)`);
    console.log(`download (GET, curl)   ${rate(download)}`);
    console.log(
      `serve peak RSS: ${(before / 1024).toFixed(0)} MiB before, ${(after / 1024).toFixed(0)} MiB after ${runs} uploads of ${mib} MiB`,
    );
  } finally {
    await srv.stop();
  }
} finally {
  await rm(dir, { recursive: true, force: true });
}
