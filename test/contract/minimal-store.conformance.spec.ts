/**
 * The store contract is enough on its own: a store with only the members every
 * store must have (lib/contract/lock-provider.ts), none of the optional
 * capabilities, passes the conformance kit (with the options for what it does
 * not offer; those cases are left out here and their absence cases run, see
 * offered-conformance.ts).
 */
import { describeOfferedConformance } from '../support/offered-conformance.js';
import { ContractOnlyLockProvider } from './fixtures/contract-only-store.js';

describeOfferedConformance(
  'a store of the required contract alone',
  () => ({ provider: new ContractOnlyLockProvider() }),
  {
    limitAndShared: false,
    acquireMany: false,
    extendMany: false,
    holder: false,
    inspect: false,
  },
);

it('the store defines none of the optional capabilities', () => {
  const provider = new ContractOnlyLockProvider();
  const optional = [
    'fenceBlocks',
    'supports',
    'transfer',
    'coalesce',
    'holder',
    'inspect',
    'watchConnection',
    'setupCheck',
    'extendMany',
    'acquireMany',
  ];
  expect(optional.filter((member) => member in provider)).toEqual([]);
});
