import type { CommandUnknownOpts } from '@commander-js/extra-typings';

/** One example command line of a command's --help, and what it does. */
export interface Example {
  line: string;
  what: string;
}

/**
 * The examples each command's --help ends with. A test checks that every flag in them is one
 * the command takes, and runs the ones that need nothing but this repository.
 */
export const EXAMPLES: Readonly<Record<string, readonly Example[]>> = {
  validate: [
    { line: 'bpa validate sites/example', what: 'check a site directory' },
    {
      line: 'bpa validate -o github sites/example',
      what: 'problems as GitHub Actions annotations on a pull request',
    },
    { line: 'bpa validate -o json sites/example/site.yaml', what: 'one file, for scripts' },
  ],
  plan: [
    {
      line: 'bpa plan sites/example --state /tmp/bpa-example-state',
      what: 'what would change (exit 2: changes)',
    },
    {
      line: 'bpa plan sites/example -o json --out /tmp/inventories',
      what: "the plan as JSON, and each cluster's hosts.ini written",
    },
    {
      line: 'bpa plan site --kubeconfig ~/.kube/config --inventory-namespace metal3',
      what: 'BareMetalHosts from the Kubernetes API',
    },
  ],
  apply: [
    { line: 'bpa apply sites/my-site', what: 'apply the current plan' },
    {
      line: 'bpa apply sites/my-site --plan-hash 3f2a…',
      what: 'apply only the plan that was reviewed',
    },
    { line: 'bpa apply sites/my-site -o json', what: 'the outcome as one JSON document' },
  ],
  reconcile: [
    { line: 'bpa reconcile --once sites/my-site', what: 'validate, observe, plan and apply once' },
    {
      line: 'bpa reconcile --once --repo https://git.example/site.git --ref main',
      what: 'one reconcile of a branch, status reports committed back',
    },
  ],
  serve: [
    {
      line: 'bpa serve --repo https://git.example/site.git --webhook-secret-file /run/secrets/hook',
      what: 'the controller, following a repository',
    },
    {
      line: 'bpa serve --watch sites/my-site -o text',
      what: 'a local directory, logs for a person',
    },
  ],
  completion: [
    { line: 'source <(bpa completion bash)', what: 'completion in this bash session' },
    {
      line: 'bpa completion zsh > "${fpath[1]}/_bpa"',
      what: 'completion in every zsh session',
    },
    { line: 'bpa completion fish > ~/.config/fish/completions/bpa.fish', what: 'fish' },
  ],
};

/** Adds the examples of each of the program's commands to the end of its --help. */
export function addExamples(program: CommandUnknownOpts): void {
  for (const cmd of program.commands) {
    const examples = EXAMPLES[cmd.name()];
    if (!examples?.length) continue;
    const lines = examples.map((e) => `  # ${e.what}\n  ${e.line}`);
    cmd.addHelpText('after', `\nExamples:\n${lines.join('\n\n')}\n`);
  }
}
