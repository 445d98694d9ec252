/**
 * Lease parsing speed: generated dnsmasq, ISC dhcpd and Kea files of 10,000 and 100,000
 * leases, parsed in memory: median time per file, beside a floor (splitting the same text into
 * lines and words).
 * Run: npx tsx bench/leases.ts
 */
import { parseLeases, type LeaseFormat } from '../src/observe/leases/index.js';

const NOW = Date.UTC(2026, 10, 19, 12, 0, 0);
const END = NOW / 1000 + 10 * 3600;
const RUNS = 7;

const mac = (i: number): string =>
  ['52', '54', '00', (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff]
    .map((x) => (typeof x === 'number' ? x.toString(16).padStart(2, '0') : x))
    .join(':');
const ip = (i: number): string => `10.${(i >> 16) & 0xff}.${(i >> 8) & 0xff}.${i & 0xff}`;

function dnsmasq(n: number): string {
  const lines: string[] = [];
  for (let i = 0; i < n; i++) lines.push(`${END} ${mac(i)} ${ip(i)} node-${i} 01:${mac(i)}`);
  return lines.join('\n') + '\n';
}

function isc(n: number): string {
  const blocks: string[] = ['authoring-byte-order little-endian;\n'];
  for (let i = 0; i < n; i++) {
    blocks.push(`lease ${ip(i)} {
  starts 4 2026/11/19 10:00:00;
  ends 4 2026/11/19 22:00:00;
  cltt 4 2026/11/19 10:00:00;
  binding state active;
  next binding state free;
  rewind binding state free;
  hardware ethernet ${mac(i)};
  uid "\\001RT\\000\\252\\273\\001";
  set vendor-class-identifier = "PXEClient:Arch:00000";
  client-hostname "node-${i}";
}
`);
  }
  return blocks.join('');
}

function kea(n: number): string {
  const lines = [
    'address,hwaddr,client_id,valid_lifetime,expire,subnet_id,fqdn_fwd,fqdn_rev,hostname,state,user_context,pool_id',
  ];
  for (let i = 0; i < n; i++)
    lines.push(`${ip(i)},${mac(i)},01:${mac(i)},43200,${END},1,0,0,node-${i},0,,0`);
  return lines.join('\n') + '\n';
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/** Median ms of RUNS calls after one warm-up. */
function time(f: () => void): number {
  f();
  const times: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    const t0 = process.hrtime.bigint();
    f();
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return median(times);
}

/**
 * The floor: splitting the text into lines and fields (words; Kea: comma-separated), the least any
 * reader must do. It puts the figures in proportion on a busy machine.
 */
function floor(text: string, separator: string): void {
  let words = 0;
  for (const line of text.split('\n')) words += line.split(separator).length;
  if (words < 0) throw new Error('unreachable');
}

function bench(format: LeaseFormat, text: string, n: number): void {
  const result = parseLeases(text, { file: 'bench', now: NOW });
  if (result.format !== format || result.problems.length > 0 || result.leases.length !== n) {
    throw new Error(`${format}: unexpected result`);
  }
  const parse = time(() => parseLeases(text, { file: 'bench', now: NOW }));
  const base = time(() => floor(text, format === 'kea' ? ',' : ' '));
  const mib = Buffer.byteLength(text) / 1048576;
  console.log(
    `${format.padEnd(8)} ${String(n).padStart(7)} leases ${mib.toFixed(2).padStart(6)} MiB  ` +
      `parse ${parse.toFixed(1).padStart(7)} ms  floor ${base.toFixed(1).padStart(6)} ms  ` +
      `(${(parse / base).toFixed(1)}x)`,
  );
}

console.log(`node ${process.version}; median of ${RUNS} runs after a warm-up`);
for (const n of [10_000, 100_000]) {
  bench('dnsmasq', dnsmasq(n), n);
  bench('isc', isc(n), n);
  bench('kea', kea(n), n);
}
