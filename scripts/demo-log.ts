import { execFile } from 'node:child_process';

/**
 * How the demo shows a repository's history: hash, subject (bpa's subjects already start with
 * `bpa:`), who wrote it, then the trailers indented.
 */
export const DEMO_LOG_FORMAT = '%h %s  (%an)%n%w(0,8,8)%b';

/** `git log` of a clone, as the demo prints it. */
export function demoLog(clone: string, count = 6): Promise<string> {
  return new Promise((resolve, reject) =>
    execFile(
      'git',
      ['-C', clone, 'log', `--format=${DEMO_LOG_FORMAT}`, '-n', String(count)],
      (err, stdout) => (err ? reject(err) : resolve(stdout)),
    ),
  );
}
