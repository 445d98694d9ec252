import { factsKey, factsTargets, type FactsMap, type FactsTarget } from '../observe/facts.js';
import type { StateStore } from '../state/store.js';
import { messageOf } from '../util/errors.js';
import type { Logger } from '../util/log.js';
import type { SiteModel } from '../validate/model.js';
import type { ApplyResult } from './engine.js';

/**
 * The facts read for the plan, with the nodes the apply worked on read again: a report shows
 * the versions the nodes have now and the nodes just added, not what was there before.
 */
export async function factsAfter(input: {
  model: SiteModel;
  result: ApplyResult;
  /** What the nodes reported before the apply. */
  before: FactsMap | undefined;
  store: StateStore;
  read: (targets: FactsTarget[]) => Promise<FactsMap>;
  log: Logger;
}): Promise<FactsMap | undefined> {
  const { result, before } = input;
  const touched = new Set(
    result.clusters.flatMap((c) =>
      c.actions
        .filter((a) => a.result !== 'not-run')
        .flatMap((a) => a.nodes.map((n) => factsKey(c.cluster, n))),
    ),
  );
  // A run stopped half-way is not reported (the next one resumes and reports).
  if (!touched.size || result.interrupted) return before;
  const applied = await input.store.readApplied();
  const targets = factsTargets(input.model, applied).filter((t) =>
    touched.has(factsKey(t.cluster, t.node)),
  );
  const facts = new Map(before);
  if (!targets.length) return facts;
  try {
    for (const [key, f] of await input.read(targets)) facts.set(key, f);
  } catch (err: unknown) {
    // What the nodes had before the apply is no longer known to be true: show nothing for them.
    input.log.warn({ err: messageOf(err) }, 'could not read the nodes again after the apply');
    for (const t of targets) facts.delete(factsKey(t.cluster, t.node));
  }
  return facts;
}
