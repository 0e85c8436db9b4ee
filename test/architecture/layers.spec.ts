/**
 * The layers of lib/ (docs/architecture.md): every folder has a layer, and
 * imports run down only (nest → leader → engine → hand-off → contract ← stores, every
 * folder may use errors/ and shared/, shared/ uses nothing of ours), never
 * up or sideways. No import circles, no file over 400 lines, and no state
 * at module level that classes pass each other (a WeakMap/WeakSet, or an
 * empty Map/Set filled at run time): a class's constructor shows what it
 * depends on. Read from the sources as text (type-only imports count too).
 *
 * KNOWN lists what lib/ still does against these rules, each with why: the
 * spec fails on anything new. Remove an entry once its cause is gone.
 */
import { circles, readLib, type LibImport } from './import-graph.js';
import { repoRoot } from '../support/paths.js';

/**
 * Longest lib file, in lines: a smell detector, not a design. A file near it
 * likely holds two concepts: split it by concept, each file named after the
 * one thing it holds, never by moving a function elsewhere to fit. 400 at
 * Prettier's printWidth of 120 (350 was set at 160: the same files now wrap
 * more lines; four whole concepts sit at 353–370).
 */
const MAX_LINES = 400;

/** A known import against a rule: `from` → `to`, and why it is still there. */
interface KnownImport {
  readonly from: string;
  readonly to: string;
  readonly why: string;
}

const KNOWN: {
  circles: KnownImport[];
  layers: KnownImport[];
  longFiles: { file: string; why: string }[];
  hosts: { file: string; name: string; why: string }[];
} = {
  /** Imports left out of the circle check: each one breaks a circle that lib/ still has. */
  circles: [],
  /** Imports across layers that a rule forbids. */
  layers: [],
  /** Files over MAX_LINES. */
  longFiles: [],
  /** Callback host interfaces still there. */
  hosts: [],
};

/** A layer rule: which files it is about, and which of their imports it forbids. */
interface Rule {
  readonly name: string;
  readonly files: RegExp;
  readonly forbids: (imp: LibImport) => boolean;
}

/**
 * The layer of each folder of lib/ (`lib/index.ts`: the root entry, on top).
 * A file imports from its own folder or from a lower layer only, so there is
 * no import back up a layer, nor across between folders of one layer.
 */
const LAYERS: Record<string, number> = {
  '(root)': 7,
  dashboard: 6, // nest-lock/dashboard: a Nest module of its own, on LockService
  health: 6, // nest-lock/health: the terminus indicator
  nest: 5, // LockModule, LockService, @Locked, LeaderService: the core's Nest side
  leader: 4, // LeaderElection, campaigns, terms, @Leader's metadata: on the engine, free of Nest
  testing: 4, // nest-lock/testing: the conformance kit (runs a LockManager)
  engine: 3,
  stores: 3,
  'hand-off': 2, // the local hand-off: wraps the store for the engine (stores may not use it: a rule below)
  telemetry: 2,
  inspection: 2,
  contract: 1,
  errors: 0,
  shared: 0,
};

/** `lib/engine/x.ts` → `engine`; `lib/stores/redis/x.ts` → `stores`; `lib/index.ts` → `(root)`. */
const folderOf = (path: string): string => (path.split('/').length > 2 ? path.split('/')[1] : '(root)');

/** A module-level declaration of a WeakMap/WeakSet, or of a Map/Set created empty (filled at run time); group 1: its name, 2: `Weak` when weak. */
const MODULE_STATE =
  /^(?:export\s+)?(?:const|let|var)\s+([\w$]+)\b[^\n]*?(?:\b(Weak)(?:Map|Set)\b|=\s*new\s+(?:Map|Set)\b(?:<[^\n]*>)?\(\s*\))/gm;
/** The first line of a top-level function. */
const FUNCTION = /^(?:export\s+)?(?:async\s+)?function\b/;

/**
 * The module-level state of a source text that can carry state between
 * classes or functions, as `<line>: <declaration>`: every WeakMap/WeakSet,
 * and every empty Map/Set except a memo, one that a single top-level
 * function alone reads and writes (such as files read once per process).
 */
function moduleState(code: string): string[] {
  const lines = code.split('\n');
  // The top-level statement each line belongs to (a new one at each line that starts in column 0, but for closing brackets).
  const statementOf: number[] = [];
  lines.forEach((line, i) => statementOf.push((statementOf[i - 1] ?? 0) + (/^[^\s})\]]/.test(line) ? 1 : 0)));
  const found: string[] = [];
  for (const m of code.matchAll(MODULE_STATE)) {
    const at = code.slice(0, m.index).split('\n').length - 1;
    const uses = new Set(
      lines.flatMap((line, i) =>
        i !== at && new RegExp(`(?<![\\w$.])${m[1].replace(/\$/g, '\\$')}(?![\\w$])`).test(line)
          ? [statementOf[i]]
          : [],
      ),
    );
    const user = uses.size === 1 ? lines[statementOf.indexOf([...uses][0])] : undefined;
    const memo = m[2] === undefined && user !== undefined && FUNCTION.test(user);
    if (!memo) found.push(`${at + 1}: ${m[0].trim()}`);
  }
  return found;
}

const ours = (imp: LibImport, ...folders: string[]): boolean =>
  !imp.external && folders.some((f) => imp.to.startsWith(`lib/${f}/`));

/**
 * The packages of the contexts beyond HTTP (docs/contexts.md): an app uses the
 * ones it has, so lib/ reads what it needs from the objects Nest hands it and
 * imports none of them, not even for a type.
 */
const INTEGRATIONS = [
  '@nestjs/graphql',
  '@nestjs/microservices',
  '@nestjs/websockets',
  '@nestjs/platform-socket.io',
  '@nestjs/event-emitter',
  '@nestjs/bullmq',
  'bullmq',
  'graphql',
  'socket.io',
  'ws',
];

const RULES: Rule[] = [
  {
    name: 'engine, hand-off, contract and shared import no @nestjs/* package',
    files: /^lib\/(engine|hand-off|contract|shared)\//,
    forbids: (i) => i.external && i.to.startsWith('@nestjs/'),
  },
  {
    name: 'shared imports nothing of ours outside shared',
    files: /^lib\/shared\//,
    forbids: (i) => !i.external && !i.to.startsWith('lib/shared/'),
  },
  {
    name: 'contract imports nothing from engine, hand-off, nest or stores',
    files: /^lib\/contract\//,
    forbids: (i) => ours(i, 'engine', 'hand-off', 'nest', 'stores'),
  },
  {
    name: 'hand-off (the local hand-off, wrapping the store) imports only contract, errors and shared',
    files: /^lib\/hand-off\//,
    forbids: (i) => !i.external && !/^lib\/(hand-off|contract|errors|shared)\//.test(i.to),
  },
  {
    name: 'stores import nothing from engine, hand-off or nest',
    files: /^lib\/stores\//,
    forbids: (i) => ours(i, 'engine', 'hand-off', 'nest'),
  },
  {
    name: 'engine imports nothing from nest or stores',
    files: /^lib\/engine\//,
    forbids: (i) => ours(i, 'nest', 'stores'),
  },
  {
    name: 'testing (the conformance kit) imports no @nestjs/* or test runner package, nothing from nest or stores',
    files: /^lib\/testing\//,
    forbids: (i) =>
      (i.external && /^(@nestjs\/|jest$|@jest\/|vitest$|@vitest\/)/.test(i.to)) ||
      ours(i, 'nest', 'stores', 'dashboard', 'health', 'leader'),
  },
  {
    name: 'nothing in lib/ imports an integration package (GraphQL, microservices, WebSockets, events, BullMQ): they stay optional',
    files: /^lib\//,
    forbids: (i) => i.external && INTEGRATIONS.includes(i.to),
  },
];

const files = readLib(repoRoot);
const imports = files.flatMap((f) => f.imports);
const known = (list: readonly KnownImport[], imp: LibImport): boolean =>
  list.some((k) => k.from === imp.from && k.to === imp.to);
const arrow = (imp: LibImport): string => `${imp.from} → ${imp.to}`;

test('the import graph is read (a broken reader would pass every rule)', () => {
  expect(files.length).toBeGreaterThan(40);
  expect(
    imports.filter((i) => i.from.startsWith('lib/engine/') && i.to === 'lib/contract/lock-provider.ts').length,
  ).toBeGreaterThan(0);
  expect(
    imports.filter((i) => i.from.startsWith('lib/engine/') && i.to.startsWith('lib/hand-off/')).length,
  ).toBeGreaterThan(0);
  expect(
    imports.filter((i) => i.from.startsWith('lib/hand-off/') && i.to === 'lib/contract/lock-provider.ts').length,
  ).toBeGreaterThan(0);
  expect(imports).toContainEqual({ from: 'lib/nest/lock.module.ts', to: '@nestjs/common', external: true });
});

test.each(RULES.map((rule) => [rule.name, rule] as const))('%s', (_name, rule) => {
  const broken = imports
    .filter((i) => rule.files.test(i.from) && rule.forbids(i) && !known(KNOWN.layers, i))
    .map(arrow);
  expect(broken).toEqual([]);
});

test('no import circles', () => {
  const checked = imports.filter((i) => !known(KNOWN.circles, i));
  // Each circle as the imports among its files.
  const found = circles(checked).map((files) =>
    checked.filter((i) => files.includes(i.from) && files.includes(i.to)).map(arrow),
  );
  expect(found).toEqual([]);
});

test('every folder of lib/ has a layer', () => {
  const folders = [...new Set(files.map((f) => folderOf(f.path)))].sort();
  expect(folders.filter((f) => LAYERS[f] === undefined)).toEqual([]);
});

test('no import runs back up a layer, nor across to another folder of the same layer', () => {
  const up = imports
    .filter((i) => !i.external && folderOf(i.from) !== folderOf(i.to))
    .filter((i) => !(LAYERS[folderOf(i.to)] < LAYERS[folderOf(i.from)]) && !known(KNOWN.layers, i))
    .map(arrow);
  expect(up).toEqual([]);
});

test('the module-state reader finds WeakMaps, WeakSets and empty Maps that carry state, and leaves memos, constants and class fields alone', () => {
  const sample = [
    'const managers = new WeakMap<LockService, LockManager>();',
    'export const owned = new WeakSet<object>();',
    'let cache: WeakMap<object, string> | undefined;',
    'const shared = new Map<string, unknown>();',
    'export function put(k: string, v: unknown): void {',
    '  shared.set(k, v);',
    '}',
    'export function get(k: string): unknown {',
    '  return shared.get(k);',
    '}',
    'const read = new Map<string, string>();',
    'export function load(file: string): string {',
    '  let text = read.get(file);',
    '  if (text === undefined) read.set(file, (text = file));',
    '  return text;',
    '}',
    "const KEYS = new Set(['ttl', 'onHeld']);",
    'class A {',
    '  private readonly ready = new WeakMap<object, number>();',
    '}',
  ].join('\n');
  expect(moduleState(sample).map((s) => s.split(':')[0])).toEqual(['1', '2', '3', '4']);
});

test("no module-level WeakMap, WeakSet, or Map/Set filled at run time other than one function's memo, in lib/ (state between classes goes through constructors)", () => {
  const found = files.flatMap((f) => moduleState(f.code).map((s) => `${f.path}:${s}`));
  expect(found).toEqual([]);
});

test(`no lib file over ${MAX_LINES} lines`, () => {
  const long = files
    .filter((f) => f.lines > MAX_LINES && !KNOWN.longFiles.some((k) => k.file === f.path))
    .map((f) => `${f.path}: ${f.lines} lines`);
  expect(long).toEqual([]);
});

/**
 * Calls run down the layers too: the engine, the hand-off, telemetry and the
 * stores take their collaborators in their constructors or answer with
 * return values, never through a callback "host" interface that a caller
 * implements to be called back (CohortHost, PermitCohortHost, MultiLockHost,
 * TelemetryHost, and in the stores WaiterProtocol, RedisMultiHost, the
 * RedisGroups host, were such).
 */
test('no callback host interface in engine, hand-off, telemetry or stores', () => {
  const hosts = files
    .filter((f) => /^lib\/(engine|hand-off|telemetry|stores)\//.test(f.path))
    .flatMap((f) =>
      [...f.code.matchAll(/\b(?:interface|type)\s+(\w*Host)\b/g)].map((m) => ({ file: f.path, name: m[1] })),
    )
    .filter((h) => !KNOWN.hosts.some((k) => k.file === h.file && k.name === h.name))
    .map((h) => `${h.file}: ${h.name}`);
  expect(hosts).toEqual([]);
});
