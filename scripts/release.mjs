/**
 * Cuts a release: moves what CHANGELOG.md lists under `## [Unreleased]` into
 * a new version's entry, dated today (UTC), updates the compare links at the
 * bottom, and sets the same version in package.json and package-lock.json
 * (`npm version --no-git-tag-version`). It commits and tags nothing: it
 * prints the commands that do, for a review of the diff first.
 *
 *   npm run release -- patch | minor | major | <x.y.z>
 *
 * It refuses to cut a release with nothing under Unreleased. Which part to
 * bump: CONTRIBUTING.md, "Versions and deprecations". It works on the package
 * in the current folder (npm runs it in the repository's root).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = process.cwd();
const fail = (message) => {
  console.error(`release: ${message}`);
  process.exit(1);
};

const bump = process.argv[2];
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const current = pkg.version;
const [major, minor, patch] = current.split('.').map(Number);
const next =
  bump === 'major'
    ? `${major + 1}.0.0`
    : bump === 'minor'
      ? `${major}.${minor + 1}.0`
      : bump === 'patch'
        ? `${major}.${minor}.${patch + 1}`
        : /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(bump ?? '')
          ? bump
          : fail(`usage: npm run release -- patch|minor|major|<x.y.z> (now ${current})`);

const changelogPath = join(root, 'CHANGELOG.md');
const changelog = readFileSync(changelogPath, 'utf8');
const heading = /^## \[Unreleased\][^\n]*\n/m.exec(changelog);
if (!heading) fail('CHANGELOG.md has no "## [Unreleased]" section');
const start = heading.index + heading[0].length;
const nextSection = changelog.slice(start).search(/^## |^\[[^\]]+\]: /m);
const end = nextSection === -1 ? changelog.length : start + nextSection;
const notes = changelog.slice(start, end).trim();
if (notes === '')
  fail('nothing is listed under "## [Unreleased]" in CHANGELOG.md: add the changes of this release first');
if (new RegExp(`^## \\[${next.replaceAll('.', '\\.')}\\]`, 'm').test(changelog))
  fail(`CHANGELOG.md already has an entry for ${next}`);

const date = new Date().toISOString().slice(0, 10);
let updated = `${changelog.slice(0, start)}\n## [${next}] - ${date}\n\n${notes}\n\n${changelog.slice(end).replace(/^\n+/, '')}`;

// The links: [Unreleased] compares the new tag with HEAD, [next] the previous tag with the new one.
const unreleasedLink = /^\[Unreleased\]: (\S+)\/compare\/v(\S+)\.\.\.HEAD$/m.exec(updated);
if (unreleasedLink) {
  const base = unreleasedLink[1];
  updated = updated.replace(
    unreleasedLink[0],
    `[Unreleased]: ${base}/compare/v${next}...HEAD\n[${next}]: ${base}/compare/v${unreleasedLink[2]}...v${next}`,
  );
}
writeFileSync(changelogPath, updated);

execFileSync('npm', ['version', next, '--no-git-tag-version'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });

console.log(
  [
    `nest-lock ${current} -> ${next}: CHANGELOG.md, package.json and package-lock.json updated. Review, then:`,
    `  git commit -am "release ${next}" && git tag v${next}`,
    '  npm publish            (prepack builds the package and strips the install-time scripts from its manifest)',
    `  git push && git push origin v${next}`,
  ].join('\n'),
);
