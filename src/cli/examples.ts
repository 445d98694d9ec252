import type { CommandUnknownOpts } from '@commander-js/extra-typings';

/** One example of a command's --help: the command line, and what it does. */
export type Example = readonly [line: string, what: string];

/**
 * The examples each command's --help ends with. A test checks that every flag in them is one
 * the command takes, and runs the ones that need nothing but this repository.
 */
export const EXAMPLES: Readonly<Record<string, readonly Example[]>> = {
  validate: [
    ['bpa validate sites/example', 'check a site directory'],
    [
      'bpa validate -o github sites/example',
      'problems as GitHub Actions annotations on a pull request',
    ],
    ['bpa validate -o json sites/example/site.yaml', 'one file, for scripts'],
  ],
  plan: [
    [
      'bpa plan sites/example --state /tmp/bpa-example-state',
      'what would change (exit 2: changes)',
    ],
    [
      'bpa plan sites/example -o json --out /tmp/inventories',
      "the plan as JSON, and each cluster's hosts.ini written",
    ],
    [
      'bpa plan site --kubeconfig ~/.kube/config --inventory-namespace metal3',
      'BareMetalHosts from the Kubernetes API',
    ],
    [
      'bpa plan site --from-status -o markdown',
      'in a pull request job: against the world bpa serve last committed, as a comment',
    ],
  ],
  diff: [
    [
      'bpa diff main my-branch --path site',
      'what a branch changes in the plan of the site in this repository',
    ],
    ['bpa diff ../site-before ./site -o json', 'two site directories, for scripts'],
  ],
  status: [
    ['bpa status --server http://127.0.0.1:8080', 'the clusters and nodes of a running bpa serve'],
    ['bpa status sites/my-site --no-nodes', 'the status/ of a site directory, clusters only'],
    [
      'bpa status -o json --server http://bpa.bpa-system:8080',
      'for scripts: exit 0 when all is Ready',
    ],
  ],
  apply: [
    ['bpa apply sites/my-site', 'apply the current plan'],
    ['bpa apply sites/my-site --plan-hash 3f2a…', 'apply only the plan that was reviewed'],
    ['bpa apply sites/my-site -o json', 'the outcome as one JSON document'],
  ],
  reconcile: [
    ['bpa reconcile --once sites/my-site', 'validate, observe, plan and apply once'],
    [
      'bpa reconcile --once --repo https://git.example/site.git --ref main',
      'one reconcile of a branch, status reports committed back',
    ],
    [
      'bpa reconcile --now --bootstrap-kubeconfig admin.conf',
      'ask the running bpa serve for a full reconcile at once (the Site object is annotated)',
    ],
  ],
  serve: [
    [
      'bpa serve --repo https://git.example/site.git --webhook-secret-file /run/secrets/hook',
      'the controller, following a repository',
    ],
    ['bpa serve --watch sites/my-site -o text', 'a local directory, logs for a person'],
  ],
  completion: [
    ['source <(bpa completion bash)', 'completion in this bash session'],
    ['bpa completion zsh > "${fpath[1]}/_bpa"', 'completion in every zsh session'],
    ['bpa completion fish > ~/.config/fish/completions/bpa.fish', 'fish'],
  ],
};

/** Adds the examples of each of the program's commands to the end of its --help. */
export function addExamples(program: CommandUnknownOpts): void {
  for (const cmd of program.commands) {
    const examples = EXAMPLES[cmd.name()];
    if (!examples?.length) continue;
    const lines = examples.map(([line, what]) => `  # ${what}\n  ${line}`);
    cmd.addHelpText('after', `\nExamples:\n${lines.join('\n\n')}\n`);
  }
}
