/**
 * The README is the front door and docs/ the rest of the house: every ```ts
 * block a user would paste, in README.md and in docs/*.md, is type-checked
 * against the built package (`nest-lock` resolves to dist/, as it would from
 * node_modules), and the README's "Testing your app" block runs as a test, as
 * written. A block that is deliberately partial (a method, a class body) is
 * marked with `<!-- readme:fragment -->` on the line before it.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Under the package (so `nest-lock` resolves to the built package by its own name) and out of git and of the test suite's own files. */
const work = join(root, 'dist', 'readme-check');
const FRAGMENT = '<!-- readme:fragment -->';

interface Block {
  /** The markdown file, relative to the repository root. */
  doc: string;
  /** Line of the opening fence (1-based). */
  line: number;
  code: string;
  fragment: boolean;
  /** The `##` heading the block is under. */
  section: string;
}

function tsBlocks(doc: string, markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  let section = '';
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].startsWith('## ')) section = lines[i].slice(3).trim();
    // A fence may be indented (a block inside a list item); its lines lose that indent.
    const fence = /^( *)```(\w*)\s*$/.exec(lines[i]);
    if (!fence) continue;
    const indent = fence[1].length;
    const end = lines.findIndex((l, j) => j > i && l.trimStart().startsWith('```'));
    if (fence[2] === 'ts' || fence[2] === 'typescript') {
      let before = i - 1;
      while (before >= 0 && lines[before].trim() === '') before--;
      const code = lines.slice(i + 1, end).map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)));
      blocks.push({ doc, line: i + 1, code: code.join('\n'), fragment: lines[before]?.trim() === FRAGMENT, section });
    }
    i = end;
  }
  return blocks;
}

function run(file: string, args: string[], timeout: number): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      file,
      args,
      { cwd: root, timeout, env: { ...process.env, NODE_OPTIONS: '--experimental-vm-modules' } },
      (err, stdout, stderr) => {
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, output: stdout + stderr });
      },
    );
  });
}

/** README.md, then every page directly in docs/ (docs/api/ is a generated report, not pages). */
const docs = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];
const blocks = docs.flatMap((doc) => tsBlocks(doc, readFileSync(join(root, doc), 'utf8')));
const readme = blocks.filter((b) => b.doc === 'README.md');

/** `docs/stores.md`, line 12 -> `docs-stores-line-12.ts`: a type error names the page and the line of its block's fence. */
function fileOf(block: Block): string {
  return `${block.doc.replace(/\.md$/, '').replace(/[^A-Za-z0-9]+/g, '-')}-line-${block.line}.ts`;
}

beforeAll(() => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
});

describe('README and docs code blocks', () => {
  test('the README and the docs have ts blocks, most of them complete', () => {
    expect(readme.length).toBeGreaterThan(5);
    expect(readme.filter((b) => !b.fragment).length).toBeGreaterThan(readme.length / 2);
    expect(new Set(blocks.filter((b) => b.doc !== 'README.md').map((b) => b.doc)).size).toBeGreaterThan(3);
    expect(blocks.filter((b) => !b.fragment).length).toBeGreaterThan(blocks.length / 2);
  });

  test('every ts block not marked as a fragment type-checks against the built package (and a wrong one fails)', async () => {
    const files: string[] = [];
    for (const block of blocks.filter((b) => !b.fragment)) {
      const file = fileOf(block);
      // `export {}`: each block is a module of its own, as a file in a user's app is.
      writeFileSync(join(work, file), `${block.code}\nexport {};\n`);
      files.push(file);
    }
    // A control: the same check must reject a block that misuses the API.
    writeFileSync(
      join(work, 'control-wrong.ts'),
      "import { LockModule } from 'nest-lock';\nLockModule.forRoot({ ttl: '30s' });\nexport {};\n",
    );
    files.push('control-wrong.ts');
    writeFileSync(
      join(work, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023'],
          types: ['node', 'jest'],
          typeRoots: [join(root, 'node_modules', '@types')],
          strict: true,
          experimentalDecorators: true,
          emitDecoratorMetadata: true,
          skipLibCheck: true,
          esModuleInterop: true,
          noEmit: true,
        },
        files,
      }),
    );
    const { output } = await run(
      process.execPath,
      [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(work, 'tsconfig.json')],
      120_000,
    );
    const errors = output.split('\n').filter((l) => /error TS\d+/.test(l));
    expect(errors.some((l) => l.startsWith('control-wrong.ts') || l.includes('/control-wrong.ts'))).toBe(true);
    // Each error names the page and the line of its block's fence.
    expect(errors.filter((l) => !l.includes('control-wrong.ts'))).toEqual([]);
  }, 150_000);

  test('the "Testing your app" block runs as a test, as written, and passes', async () => {
    const testing = readme.filter((b) => b.section === 'Testing your app' && !b.fragment);
    expect(testing).toHaveLength(1);
    const file = join(work, 'testing-your-app.spec.ts');
    writeFileSync(file, testing[0].code);
    const jestConfig = (
      (await import(pathToFileURL(join(root, 'jest.config.js')).href)) as {
        default: { moduleNameMapper: Record<string, string> };
      }
    ).default;
    const config = {
      ...jestConfig,
      rootDir: root,
      testMatch: [file],
      // In the user's app `nest-lock` comes from node_modules; here, the same code from the sources (one copy of the classes).
      moduleNameMapper: { ...jestConfig.moduleNameMapper, '^nest-lock$': '<rootDir>/lib/index.ts' },
    };
    const { code, output } = await run(
      process.execPath,
      [join(root, 'node_modules', 'jest', 'bin', 'jest.js'), '--runInBand', '--ci', '--config', JSON.stringify(config)],
      120_000,
    );
    expect(output).toMatch(/Tests:\s+\d+ passed, \d+ total/);
    expect(output).not.toMatch(/failed/);
    expect(code).toBe(0);
  }, 150_000);
});

/** The README is a front door, not the house: what it is, install, a quick start, the stores, links. */
const MAX_README_BYTES = 25_000;

test(`README.md is at most ${MAX_README_BYTES} bytes (set-up, compatibility detail and the bench discussion live in docs/)`, () => {
  expect(statSync(join(root, 'README.md')).size).toBeLessThanOrEqual(MAX_README_BYTES);
});

/** GitHub's anchor of each heading of a markdown text: lower case, punctuation dropped, spaces as hyphens, `-1`, `-2` for repeats. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = heading[1]
      .replace(/<[^>]*>/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    anchors.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return anchors;
}

describe('README links', () => {
  // The README is also the package's page on the npm registry, where docs/ and the other files of the
  // repository are not: links to them are absolute, to the repository package.json names.
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    repository: { url: string };
    homepage: string;
    bugs: { url: string };
  };
  const repository = pkg.repository.url.replace(/^git\+/, '').replace(/\.git$/, '');
  const [, owner, name] = /^https:\/\/github\.com\/([^/]+)\/([^/]+)$/.exec(repository) ?? [];
  const links = [...readFileSync(join(root, 'README.md'), 'utf8').matchAll(/(!?)\[[^\]]*\]\(([^)\s]+)\)/g)].map(
    (m) => ({ image: m[1] === '!', target: m[2] }),
  );

  test('package.json names the repository on GitHub, with its homepage and issues', () => {
    expect(owner).toBeDefined();
    expect(pkg.homepage).toBe(`${repository}#readme`);
    expect(pkg.bugs.url).toBe(`${repository}/issues`);
  });

  test('every link to a file of the repository is absolute, to a file that exists (images from raw.githubusercontent.com)', () => {
    const relative = links.filter((l) => !/^(https?:|#|mailto:)/.test(l.target));
    expect(relative).toEqual([]);
    const blob = `${repository}/blob/main/`;
    const raw = `https://raw.githubusercontent.com/${owner}/${name}/main/`;
    const ours = links.filter(
      (l) => l.target.startsWith(blob) || l.target.startsWith(raw) || l.target.startsWith(repository),
    );
    expect(ours.length).toBeGreaterThan(20);
    for (const link of ours) {
      const prefix = link.image ? raw : blob;
      expect({ link: link.target, absolute: link.target.startsWith(prefix) }).toEqual({
        link: link.target,
        absolute: true,
      });
      const file = link.target.slice(prefix.length).split('#')[0];
      expect({ link: link.target, exists: existsSync(join(root, file)) }).toEqual({ link: link.target, exists: true });
    }
  });

  test('every anchor of a link, in the README or in a page it links to, names a heading there', () => {
    const blob = `${repository}/blob/main/`;
    const anchored = links.filter(
      (l) => l.target.startsWith('#') || (l.target.startsWith(blob) && /\.md#/.test(l.target)),
    );
    expect(anchored.length).toBeGreaterThan(3);
    for (const link of anchored) {
      const [path, anchor] = link.target.startsWith('#')
        ? ['README.md', link.target.slice(1)]
        : link.target.slice(blob.length).split('#');
      const found = anchorsOf(readFileSync(join(root, path), 'utf8')).has(anchor);
      expect({ link: link.target, found }).toEqual({ link: link.target, found: true });
    }
  });
});

describe('links between the pages (CONTRIBUTING.md and docs/)', () => {
  const pages = ['CONTRIBUTING.md', ...docs.filter((d) => d.startsWith('docs/'))];
  const links = pages.flatMap((page) =>
    [...readFileSync(join(root, page), 'utf8').matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)]
      .map((m) => m[1])
      .filter((target) => !/^(https?:|mailto:)/.test(target))
      .map((target) => ({ page, target })),
  );

  test('every relative link names a file that exists, and a heading of it when it has an anchor', () => {
    expect(links.length).toBeGreaterThan(20);
    for (const { page, target } of links) {
      const [path, anchor] = target.split('#');
      const file = path === '' ? join(root, page) : join(root, dirname(page), path);
      const exists = existsSync(file);
      expect({ page, target, exists }).toEqual({ page, target, exists: true });
      if (anchor !== undefined && file.endsWith('.md')) {
        expect({ page, target, found: anchorsOf(readFileSync(file, 'utf8')).has(anchor) }).toEqual({
          page,
          target,
          found: true,
        });
      }
    }
  });
});
