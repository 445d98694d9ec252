/** The directory under the site path where bpa writes its reports; never input. */
export const STATUS_DIR = 'status';
/** The controller's report of the world it observed (report/inventory.ts writes it). */
export const INVENTORY_REPORT = `${STATUS_DIR}/inventory.yaml`;

/** 'sites/example/', './sites/example', 'sites//example' → 'sites/example'; '.', '' → ''. */
export function normalizeSitePath(sitePath: string): string {
  return sitePath
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/');
}
