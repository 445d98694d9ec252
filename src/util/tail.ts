/**
 * The end of a program's output, as errors and reports carry it: the last lines, a bounded
 * number of bytes, no terminal colours, no credentials.
 */
import { redact, sanitize } from './redact.js';

export const TAIL_MAX_BYTES = 2048;
export const TAIL_MAX_LINES = 20;

// Terminal colours and cursor movement from installers (ansible) are noise in a report.
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;

/** The last lines of a process output, at most ~2 KB, without colours or credentials. */
export function tailOf(text: string, maxLines = TAIL_MAX_LINES, maxBytes = TAIL_MAX_BYTES): string {
  const clean = sanitize(text.replace(ANSI, '').replace(/\r\n?/g, '\n')).trimEnd();
  const lines = clean.split('\n');
  let tail = lines.slice(-maxLines).join('\n');
  let cut = lines.length > maxLines;
  if (Buffer.byteLength(tail) > maxBytes) {
    const bytes = Buffer.from(tail);
    // Drop the partial character at the cut (continuation bytes are 10xxxxxx).
    let start = bytes.length - maxBytes;
    while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start++;
    tail = bytes.subarray(start).toString();
    cut = true;
  }
  return cut ? `…${tail}` : tail;
}

/** The last lines of an output, short and redacted: what a report may carry of it. */
export function excerpt(text: string, maxLines = 5, maxBytes = 1000): string {
  // Redacted before it is cut to size, so a key block the cut would halve is still seen
  // whole; only a generous end of a long output is looked at.
  const window = text.slice(-WINDOW_CHARS).split('\n').slice(-WINDOW_LINES).join('\n');
  return redact(tailOf(redact(window), maxLines, maxBytes));
}

const WINDOW_CHARS = 64 * 1024;
const WINDOW_LINES = 200;
