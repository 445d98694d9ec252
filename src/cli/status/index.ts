import type { Command } from '@commander-js/extra-typings';
import { UsageError } from '../../util/errors.js';
import { EXIT, type Io } from '../io.js';
import { formatStatus } from '../output/status.js';
import { outputOption } from '../output-option.js';

/**
 * `bpa status [PATH]`: the clusters and nodes of a site as bpa last reported them, from a
 * running controller (--server URL, its status API) or from the `status/` reports of a site
 * directory. Exit 0 when the site and every cluster are Ready, 1 otherwise, so that scripts
 * can wait on it.
 */
export function registerStatus(program: Command, io: Io): void {
  program
    .command('status')
    .description(
      'show the site, its clusters and nodes as bpa reported them, from a running `bpa serve` (--server URL) or the status/ of a site directory (exit 0: all Ready, 1: not)',
    )
    .argument('[path]', 'site directory holding status/ (without --server)')
    .option('--server <url>', 'the URL of a running bpa serve, e.g. http://127.0.0.1:8080')
    .addOption(outputOption(['table', 'json']))
    .option('--no-nodes', 'leave out the table of nodes')
    .action(async (path, opts) => {
      // Loaded when used: it reads YAML with the yaml package, which no other command loads.
      const { allReady, readFromDir, readFromServer } = await import('./read.js');
      const server = opts.server;
      if (server !== undefined && path !== undefined)
        throw new UsageError('give either a site directory or --server URL, not both');
      const view =
        server !== undefined ? await readFromServer(server) : await readFromDir(path ?? '.');
      const ready = allReady(view);
      if (opts.output === 'json') io.out(JSON.stringify({ ready, ...view }, null, 2) + '\n');
      else io.out(formatStatus(view, { nodes: opts.nodes }));
      io.exit(ready ? EXIT.ok : EXIT.failed);
    });
}
