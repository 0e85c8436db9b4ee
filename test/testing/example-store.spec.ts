/**
 * The example store of docs/custom-store.md (examples/map-lock-provider.ts)
 * passes the conformance kit, with the options for what it does not offer;
 * and the docs show the file as it is.
 */
import { describe, it, beforeAll, afterAll } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeLockProviderConformance } from 'nest-lock/testing';
import { MapLockProvider } from '../../examples/map-lock-provider.js';
import { repoRoot } from '../support/paths.js';

describeLockProviderConformance(
  'MapLockProvider (docs/custom-store.md)',
  () => ({ provider: new MapLockProvider() }),
  { describe, it, beforeAll, afterAll },
  {
    limitAndShared: false,
    acquireMany: false,
    extendMany: false,
    holder: false,
    inspect: false,
  },
);

it('docs/custom-store.md shows examples/map-lock-provider.ts verbatim', () => {
  const docs = readFileSync(join(repoRoot, 'docs/custom-store.md'), 'utf8');
  const example = readFileSync(join(repoRoot, 'examples/map-lock-provider.ts'), 'utf8');
  expect(docs).toContain(`\`\`\`ts\n${example}\`\`\``);
});
