/**
 * Every text a user can read (an error's message, a log line, a warning, a
 * cause or an option's description inside one) comes from
 * lib/errors/messages/: no other lib file writes one inline. Read from the
 * sources with the TypeScript parser, two rules:
 *
 * - **prose**: no string or template literal reads as words, that is holds
 *   two words in a row ("the provider is closed", "true or false"); the
 *   literals of a `+` chain count as one text, the parts of a template
 *   literal around a `${}` as separate ones.
 * - **sinks**: what an error is built with, or a logger or an error helper
 *   is given (`new XxxError(...)`, `.log/.warn/.error/.debug/...(...)`,
 *   `xxxError(...)`) holds no literal of more than one word, such as an operation
 *   or option name (`'acquire'`, `` `${where}: prune` ``).
 *
 * Module specifiers, literal types and property names are not texts.
 * EXEMPT lists the files whose texts are their own, each with why.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { repoRoot } from '../support/paths.js';

const EXEMPT: Array<{ files: RegExp; why: string }> = [
  { files: /^lib\/errors\/messages\//, why: 'the texts themselves' },
  {
    files: /^lib\/testing\//,
    why:
      "the conformance kit is test code shipped to store authors: a case's title and its assertion texts say what it checks, beside the check " +
      "(what the kit says about a store's set-up and its options is in messages/testing.messages.ts)",
  },
  {
    files: /^lib\/dashboard\/lock-dashboard\.page\.ts$/,
    why: "the lock page's HTML, CSS and script: its labels are its markup, shown in a browser",
  },
  {
    files: /^lib\/stores\/redis\/scripts\/lua-source\.cts$/,
    why: "CommonJS (it finds the shipped .lua files by __dirname), so it cannot import the ES module messages; its one error, an include cycle in the library's own Lua, is a bug of the library, never a user's",
  },
];

/** Two words in a row: a text. */
const PROSE = /[A-Za-z]+\s+[A-Za-z]{2,}/;
/** A word of a sink's literal: a run of letters, or a name such as `redis.port` or `inspect()`. */
const WORD = /[A-Za-z][\w.@-]*(\(\))?/g;
const LOG_METHODS = new Set(['log', 'warn', 'error', 'debug', 'verbose', 'fatal', 'info', 'trace', 'emitWarning']);
/** Stands for a `${}` or a non-literal operand: not a letter, not a space, so no words run across it. */
const HOLE = '\u0000';

/** An inline text found in a source. */
interface InlineText {
  readonly file: string;
  readonly line: number;
  readonly rule: 'prose' | 'sink';
  readonly text: string;
}

function literalText(node: ts.Node): string | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return node.text;
  if (ts.isTemplateExpression(node))
    return node.head.text + node.templateSpans.map((s) => HOLE + s.literal.text).join('');
  return undefined;
}

/** A `+` chain with at least one literal: its literals' texts, with a hole for each other operand. */
function chainText(node: ts.BinaryExpression): string | undefined {
  const parts: string[] = [];
  let literals = 0;
  const flatten = (n: ts.Expression): void => {
    const inner = ts.isParenthesizedExpression(n) ? n.expression : n;
    if (ts.isBinaryExpression(inner) && inner.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      flatten(inner.left);
      flatten(inner.right);
      return;
    }
    const text = literalText(inner);
    if (text === undefined) parts.push(HOLE);
    else {
      literals++;
      parts.push(text);
    }
  };
  flatten(node);
  return literals > 0 ? parts.join('') : undefined;
}

/** Literals that are names, not texts: module specifiers, literal types, property names. */
function isName(node: ts.Node): boolean {
  const parent = node.parent;
  if (ts.isImportDeclaration(parent) || ts.isExportDeclaration(parent) || ts.isExternalModuleReference(parent))
    return true;
  if (ts.isLiteralTypeNode(parent) || ts.isImportTypeNode(parent.parent)) return true;
  if (
    (ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent) || ts.isPropertySignature(parent)) &&
    parent.name === node
  )
    return true;
  if (
    ts.isCallExpression(parent) &&
    (parent.expression.kind === ts.SyntaxKind.ImportKeyword ||
      (ts.isIdentifier(parent.expression) && parent.expression.text === 'require'))
  ) {
    return true;
  }
  return false;
}

function calleeName(node: ts.CallExpression | ts.NewExpression): string | undefined {
  const callee = node.expression;
  if (ts.isIdentifier(callee)) return callee.text;
  if (ts.isPropertyAccessExpression(callee)) return callee.name.text;
  return undefined;
}

function isSink(node: ts.Node): node is ts.CallExpression | ts.NewExpression {
  if (!ts.isNewExpression(node) && !ts.isCallExpression(node)) return false;
  const name = calleeName(node);
  if (name === undefined) return false;
  if (ts.isNewExpression(node)) return /Error$/.test(name);
  return /Error$/.test(name) || (LOG_METHODS.has(name) && ts.isPropertyAccessExpression(node.expression));
}

/** The inline texts of one source file. */
function inlineTexts(file: string, source: string): InlineText[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: InlineText[] = [];
  const seen = new Set<string>();
  const report = (node: ts.Node, rule: InlineText['rule'], text: string): void => {
    const line = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1;
    const key = `${rule}:${node.getStart(sf)}`;
    if (seen.has(key)) return;
    seen.add(key);
    found.push({ file, line, rule, text: text.replaceAll(HOLE, '${}') });
  };
  const checkSinkArgument = (node: ts.Node): void => {
    const text = literalText(node);
    if (text !== undefined && !isName(node)) {
      for (const part of text.split(HOLE)) if ((part.match(WORD) ?? []).length > 1) report(node, 'sink', text);
    }
    ts.forEachChild(node, checkSinkArgument);
  };
  const visit = (node: ts.Node): void => {
    if (isSink(node)) node.arguments?.forEach(checkSinkArgument);
    if (
      ts.isBinaryExpression(node) &&
      node.operatorToken.kind === ts.SyntaxKind.PlusToken &&
      !ts.isBinaryExpression(node.parent)
    ) {
      const text = chainText(node);
      if (text !== undefined && PROSE.test(text)) report(node, 'prose', text);
    }
    const text = literalText(node);
    if (text !== undefined && !isName(node) && text.split(HOLE).some((part) => PROSE.test(part)))
      report(node, 'prose', text);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

function walk(dir: string): string[] {
  return readdirSync(join(repoRoot, dir))
    .sort()
    .flatMap((name) => {
      const path = `${dir}/${name}`;
      if (statSync(join(repoRoot, path)).isDirectory()) return walk(path);
      return /\.(ts|cts|mts)$/.test(name) ? [path] : [];
    });
}

const where = (t: InlineText): string => `${t.file}:${t.line} (${t.rule}): ${t.text.slice(0, 120)}`;

describe('user-readable texts live in lib/errors/messages/', () => {
  const files = walk('lib');

  test('the reader finds inline texts, and only those (a broken reader would pass everything)', () => {
    const control = [
      "import { x } from './a b.js';",
      "type Kind = 'scheduled task' | 'event';",
      "const headers = { 'Content Type': 1 };",
      "throw new Error('the provider is closed');", // 4
      'logger.warn(`Lock "${name}" was lost: ${cause}`);', // 5
      "const text = 'held' + ' ' + 'elsewhere';", // 6
      'reject(new LockStoreError(\'acquire\', `${detail} (closed; key "${key}")`));', // 7
      'new LockStoreError(\'acquire\', `${detail} (key "${key}")`);',
      "this.clients.storeError('ping', client, err, '');", // 9
      "const expected = 'true or false';", // 10
      'const ok = `${a}:${b}`;',
    ].join('\n');
    const found = inlineTexts('control.ts', control).map((t) => `${t.line} ${t.rule}`);
    expect(found.sort()).toEqual(['10 prose', '4 prose', '4 sink', '5 prose', '5 sink', '6 prose', '7 sink'].sort());
    // The messages hold many texts: the reader sees them there.
    const messages = files.filter((f) => f.startsWith('lib/errors/messages/'));
    expect(messages.flatMap((f) => inlineTexts(f, readFileSync(join(repoRoot, f), 'utf8'))).length).toBeGreaterThan(
      100,
    );
  });

  test.each(EXEMPT.map((e) => [e.files.source, e] as const))(
    'each exemption still covers a file (%s)',
    (_source, exempt) => {
      expect(files.filter((f) => exempt.files.test(f)).length).toBeGreaterThan(0);
    },
  );

  test('no other lib file writes a text inline', () => {
    const checked = files.filter((f) => !EXEMPT.some((e) => e.files.test(f)));
    expect(checked.length).toBeGreaterThan(80);
    const found = checked.flatMap((f) => inlineTexts(f, readFileSync(join(repoRoot, f), 'utf8')));
    expect(found.map(where)).toEqual([]);
  });
});
