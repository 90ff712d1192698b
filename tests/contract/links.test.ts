/**
 * The repository documents itself: every relative link in the README and in docs/ resolves to a
 * file inside the repository (a clone has nothing beside it), and a link to a heading of a
 * Markdown file names a heading that exists, by GitHub's anchor rule.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

const ROOT = resolve(__dirname, '..', '..');

/** The link targets of a Markdown text, outside fenced code: inline `[text](target)` and `[ref]: target`. */
function linkTargets(markdown: string): string[] {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
  const inline = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const references = [...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$/gm)].map(
    (m) => m[1],
  );
  return [...inline, ...references];
}

/** GitHub's heading anchor: lower case, punctuation dropped but `-` and `_`, spaces as `-`. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsIn(markdown: string): Set<string> {
  const prose = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  return new Set([...prose.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)].map((m) => anchorOf(m[1])));
}

/** Why `target`, linked from the file at `from`, does not resolve inside the repository; null when it does. */
function brokenLink(from: string, target: string, root = ROOT): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // https:, mailto: ...: not a file of the repository
  const [pathPart, anchor] = target.split('#', 2);
  const file = pathPart === '' ? from : resolve(dirname(from), decodeURIComponent(pathPart));
  const inside = relative(root, file);
  if (inside.startsWith('..') || inside.split(sep)[0] === '..')
    return `${target} points outside the repository`;
  if (!existsSync(file)) return `${target}: no such file ${inside}`;
  if (anchor !== undefined && anchor !== '' && file.endsWith('.md') && statSync(file).isFile()) {
    if (!anchorsIn(readFileSync(file, 'utf8')).has(anchor))
      return `${target}: no heading #${anchor} in ${inside}`;
  }
  return null;
}

function documents(): string[] {
  const docs = join(ROOT, 'docs');
  const pages = existsSync(docs)
    ? readdirSync(docs)
        .filter((name) => name.endsWith('.md'))
        .map((name) => join(docs, name))
    : [];
  return [join(ROOT, 'README.md'), ...pages];
}

describe('links in the README and docs/', () => {
  it.each(documents().map((file) => [relative(ROOT, file), file]))(
    '%s links only inside the repository',
    (_name, file) => {
      const broken = linkTargets(readFileSync(file, 'utf8'))
        .map((target) => brokenLink(file, target))
        .filter((problem): problem is string => problem !== null);
      expect(broken).toEqual([]);
    },
  );

  it('links every docs page from the README', () => {
    const readme = linkTargets(readFileSync(join(ROOT, 'README.md'), 'utf8')).map((t) => t.split('#')[0]);
    const pages = documents()
      .slice(1)
      .map((file) => relative(ROOT, file).split(sep).join('/'));
    expect(pages.filter((page) => !readme.includes(page))).toEqual([]);
  });
});

describe('the link checker', () => {
  const readme = join(ROOT, 'README.md');

  it('finds inline and reference links, not those in code', () => {
    const text = [
      'See [a](docs/a.md) and [b](<docs/b.md> "title").',
      '[ref]: docs/ref.md',
      '`[not](code.md)`',
      '```',
      '[no](fenced.md)',
      '```',
    ].join('\n');
    expect(linkTargets(text)).toEqual(['docs/a.md', 'docs/b.md', 'docs/ref.md']);
  });

  it('refuses a link out of the repository, as the README once had to ../shared', () => {
    expect(brokenLink(readme, '../shared/CONTRACTS.md')).toBe(
      '../shared/CONTRACTS.md points outside the repository',
    );
  });

  it('refuses a missing file and a missing heading, and takes a web link and a present heading', () => {
    expect(brokenLink(readme, 'docs/nothing.md')).toContain('no such file');
    expect(brokenLink(readme, 'docs/messages.md#no-such-heading')).toContain('no heading');
    expect(brokenLink(readme, 'docs/messages.md#park-reasons')).toBeNull();
    expect(brokenLink(readme, 'https://learn.microsoft.com/')).toBeNull();
  });

  it('makes anchors as GitHub does', () => {
    expect(anchorOf('The report (`--report`)')).toBe('the-report---report');
    expect(anchorOf('1.3 What happens to an entry')).toBe('13-what-happens-to-an-entry');
  });
});
