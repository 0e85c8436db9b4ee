/**
 * The layers of lib/ (see docs and the brief of the redesign): imports run
 * one way, nest → engine → contract ← stores, everything may use errors/ and
 * shared/, and shared/ uses nothing of ours. No import circles, no file over
 * 350 lines. Read from the sources as text (type-only imports count too).
 *
 * KNOWN lists what lib/ still does against these rules, each with why: the
 * spec fails on anything new. Remove an entry once its cause is gone.
 */
import { circles, readLib, type LibImport } from './import-graph.js';
import { repoRoot } from '../support/paths.js';

/** Longest lib file, in lines. */
const MAX_LINES = 350;

/** A known import against a rule: `from` → `to`, and why it is still there. */
interface KnownImport {
  readonly from: string;
  readonly to: string;
  readonly why: string;
}

const KNOWN: { circles: KnownImport[]; layers: KnownImport[]; longFiles: { file: string; why: string }[] } = {
  /** Imports left out of the circle check: each one breaks a circle that lib/ still has. */
  circles: [],
  /** Imports across layers that a rule forbids. */
  layers: [],
  /** Files over MAX_LINES. */
  longFiles: [],
};

/** A layer rule: which files it is about, and which of their imports it forbids. */
interface Rule {
  readonly name: string;
  readonly files: RegExp;
  readonly forbids: (imp: LibImport) => boolean;
}

const ours = (imp: LibImport, ...folders: string[]): boolean => !imp.external && folders.some((f) => imp.to.startsWith(`lib/${f}/`));

const RULES: Rule[] = [
  {
    name: 'engine, contract and shared import no @nestjs/* package',
    files: /^lib\/(engine|contract|shared)\//,
    forbids: (i) => i.external && i.to.startsWith('@nestjs/'),
  },
  { name: 'shared imports nothing of ours outside shared', files: /^lib\/shared\//, forbids: (i) => !i.external && !i.to.startsWith('lib/shared/') },
  { name: 'contract imports nothing from engine, nest or stores', files: /^lib\/contract\//, forbids: (i) => ours(i, 'engine', 'nest', 'stores') },
  { name: 'engine imports nothing from nest or stores', files: /^lib\/engine\//, forbids: (i) => ours(i, 'nest', 'stores') },
  {
    name: 'testing (the conformance kit) imports no @nestjs/* or test runner package, nothing from nest or stores',
    files: /^lib\/testing\//,
    forbids: (i) => (i.external && /^(@nestjs\/|jest$|@jest\/|vitest$|@vitest\/)/.test(i.to)) || ours(i, 'nest', 'stores', 'dashboard', 'health', 'leader'),
  },
];

const files = readLib(repoRoot);
const imports = files.flatMap((f) => f.imports);
const known = (list: readonly KnownImport[], imp: LibImport): boolean => list.some((k) => k.from === imp.from && k.to === imp.to);
const arrow = (imp: LibImport): string => `${imp.from} → ${imp.to}`;

test('the import graph is read (a broken reader would pass every rule)', () => {
  expect(files.length).toBeGreaterThan(40);
  expect(imports.filter((i) => i.from.startsWith('lib/engine/') && i.to === 'lib/contract/lock-provider.ts').length).toBeGreaterThan(0);
  expect(imports).toContainEqual({ from: 'lib/nest/lock.module.ts', to: '@nestjs/common', external: true });
});

test.each(RULES.map((rule) => [rule.name, rule] as const))('%s', (_name, rule) => {
  const broken = imports.filter((i) => rule.files.test(i.from) && rule.forbids(i) && !known(KNOWN.layers, i)).map(arrow);
  expect(broken).toEqual([]);
});

test('no import circles', () => {
  const checked = imports.filter((i) => !known(KNOWN.circles, i));
  // Each circle as the imports among its files.
  const found = circles(checked).map((files) => checked.filter((i) => files.includes(i.from) && files.includes(i.to)).map(arrow));
  expect(found).toEqual([]);
});

test(`no lib file over ${MAX_LINES} lines`, () => {
  const long = files.filter((f) => f.lines > MAX_LINES && !KNOWN.longFiles.some((k) => k.file === f.path)).map((f) => `${f.path}: ${f.lines} lines`);
  expect(long).toEqual([]);
});
