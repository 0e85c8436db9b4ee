/**
 * The example store of docs/custom-store.md (examples/map-lock-provider.ts)
 * passes the conformance kit, with the options for what it does not offer
 * (those cases left out here, their absence cases run: see offered-conformance.ts);
 * and the docs show the file as it is.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describeOfferedConformance } from '../support/offered-conformance.js';
import { MapLockProvider } from '../../examples/map-lock-provider.js';
import { repoRoot } from '../support/paths.js';

describeOfferedConformance('MapLockProvider (docs/custom-store.md)', () => ({ provider: new MapLockProvider() }), {
  limitAndShared: false,
  acquireMany: false,
  extendMany: false,
  holder: false,
  inspect: false,
});

it('docs/custom-store.md shows examples/map-lock-provider.ts verbatim', () => {
  const docs = readFileSync(join(repoRoot, 'docs/custom-store.md'), 'utf8');
  const example = readFileSync(join(repoRoot, 'examples/map-lock-provider.ts'), 'utf8');
  expect(docs).toContain(`\`\`\`ts\n${example}\`\`\``);
});
