import { Writable } from 'node:stream';
import { printable } from '../../util/printable.js';

const LEVELS: Record<number, string> = {
  10: 'trace',
  20: 'debug',
  30: 'info',
  40: 'warn',
  50: 'error',
  60: 'fatal',
};
const SKIP = new Set(['level', 'time', 'msg', 'app', 'pid', 'hostname']);

/** Renders bpa's JSON log lines for a terminal: `bpa [cluster] action/step: message key=value`. */
export function humanLogStream(write: (text: string) => void): Writable {
  let pending = '';
  return new Writable({
    write(chunk: Buffer, _enc, done) {
      pending += chunk.toString('utf8');
      let nl: number;
      while ((nl = pending.indexOf('\n')) !== -1) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        write(printable(render(line)) + '\n');
      }
      done();
    },
  });
}

function render(line: string): string {
  let rec: Record<string, unknown>;
  try {
    rec = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const level = LEVELS[Number(rec['level'])] ?? 'info';
  const where = [
    rec['cluster'] ? `[${String(rec['cluster'])}]` : '',
    [rec['action'], rec['step']].filter(Boolean).join('/'),
  ]
    .filter(Boolean)
    .join(' ');
  const extra = Object.entries(rec)
    .filter(([k]) => !SKIP.has(k) && k !== 'cluster' && k !== 'action' && k !== 'step')
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `bpa ${level === 'info' ? '' : `${level.toUpperCase()} `}${where ? `${where}: ` : ''}${String(rec['msg'] ?? '')}${extra ? ` ${extra}` : ''}`;
}
